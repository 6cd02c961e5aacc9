"""The held-out tests' small parts, without a run: the verdict's deadline counts their run."""
from __future__ import annotations

from nightshift.supervisor.config.schema import parse_config
from nightshift.supervisor.shift.verdict_clock import deadline_for

TESTS = '[verify]\ntest_command = "python -m pytest -q"\ntimeout = "10m"\n'


def test_the_verdicts_deadline_counts_the_held_out_tests_run():
    without = deadline_for(parse_config(TESTS))
    held = deadline_for(parse_config(TESTS + 'heldout_tests = "/somewhere/tests"\n'))
    assert held - without == 600.0


def test_the_tests_answers_count_what_the_same_verdicts_reference_exam_released():
    from types import SimpleNamespace

    from nightshift.supervisor.verify.heldout_tests import check_heldout_tests
    ctx = SimpleNamespace(config=parse_config(TESTS + 'heldout_tests = "/somewhere/tests"\n'),
                          state={"heldout": {"bits": 29.0}})
    check, record = check_heldout_tests(ctx, True, True, oracle_released={"bits": 2.0})  # 29 + 2 + log2(4) > 32
    assert not check.passed and check.summary.startswith("held-out tests: not released")
    assert record["withheld"] and record["withheld_by"] == "[verify] heldout_budget"


def test_one_ladder_for_both_exams_and_an_answer_after_a_pass_costs_a_bit():
    from nightshift.supervisor.verify import heldout_tests
    from nightshift.supervisor.verify.oracle.exam import BANDS, answers, ladder
    assert [answers(best) for best in (0, 1, 2, 3)] == [2, 2, 3, 4]  # after a pass: "passes" or "fails", 1 bit
    said = [ladder(before, now, BANDS, "again", lambda b: f"no better ({b})") for before, now in
            [(3, 0), (3, 2), (3, 3), (2, 2), (2, 1), (1, 2), (0, 1), (0, 0)]]
    assert said == [BANDS[0], BANDS[2], BANDS[3], f"no better ({BANDS[2]})", BANDS[1], f"no better ({BANDS[1]})",
                    "again", BANDS[0]]
    assert heldout_tests.ladder is ladder and heldout_tests.answers is answers  # the tests' exam climbs the same one


def test_the_report_reads_the_held_out_tests_store_without_validating_the_config_again(tmp_path, monkeypatch):
    import json

    import nightshift.supervisor.config.schema as schema
    from nightshift.supervisor.cli.report.verb import build_report
    from nightshift.supervisor.run.heldout_tests_record import read_report, report_name, write_report
    store = tmp_path / "store"
    write_report(store, report_name("r1", 1, 2), {"tree": "abc", "outcomes": {"tests/test_x.py::test_y": "passed"}})
    assert read_report(store, "r1-1-t2")["outcomes"] == {"tests/test_x.py::test_y": "passed"}
    assert read_report(store, "r1-1-t3") is None
    run_dir = tmp_path / "ws" / ".nightshift" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "config.toml").write_text(TESTS + f"heldout_tests = {json.dumps(str(store))}\n")
    (run_dir / "events.jsonl").write_text("")
    parsed = []
    real = schema.parse_config
    monkeypatch.setattr(schema, "parse_config", lambda *a, **k: parsed.append(1) or real(*a, **k))
    monkeypatch.setattr("nightshift.supervisor.shift.launcher.parse_config", schema.parse_config, raising=False)
    out, report = build_report(run_dir, tmp_path / "report.html")
    assert len(parsed) == 1, parsed  # the report's own gathering; the store is one key read, not a second validation
    assert any("tests/test_x.py::test_y: passed" in line for line in report.heldout_lines), report.heldout_lines


JUNIT = '''<testsuites><testsuite name="pytest">
<testcase classname="tests.test_x" name="test_forged"><properties>
<property name="nightshift_always_equal" value="lib._Sum (a subclass of int with its own __eq__)"/></properties>
</testcase>
<testcase classname="tests.test_x" name="test_plain"><failure message="assert 1 == 2"/></testcase>
</testsuite></testsuites>'''


def test_one_reading_of_the_junit_report_gives_the_outcomes_and_the_probes_findings(tmp_path):
    from nightshift.supervisor.verify.junit import read_junit
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    (tmp_path / "junit.xml").write_text(JUNIT)
    results, found = read_junit(tmp_path / "junit.xml", tmp_path)
    assert {t: r["outcome"] for t, r in results.items()} == {"tests/test_x.py::test_forged": "passed",
                                                             "tests/test_x.py::test_plain": "failed"}
    assert found == {"tests/test_x.py::test_forged": ["lib._Sum (a subclass of int with its own __eq__)"]}


def test_a_verdicts_ratchet_and_held_sets_come_from_one_reading_of_the_passed_tests(tmp_path, monkeypatch):
    from nightshift.supervisor.run.paths import RunPaths
    from nightshift.supervisor.shift.ledger import RunLedger
    ledger = RunLedger(RunPaths(tmp_path))
    ledger.state = {"ratchet": {"passing": ["a"], "collected": ["a", "b", "c"], "released": {"c": "x"}}}
    reads = []
    monkeypatch.setattr(RunLedger, "recorded_tests", lambda self: reads.append(1) or {"d"})
    assert ledger.test_sets() == ({"a", "d"}, {"a", "b", "d"}) and len(reads) == 1
    assert ledger.test_sets() == (ledger.passed_tests(), ledger.held_tests())


LATIN1 = "# caf\xe9\ndef test_one():\n    assert 1\n\n\ndef test_two():\n    assert 2\n".encode("latin-1")


def test_a_test_file_that_is_not_utf8_moves_byte_for_byte_and_is_never_split(tmp_path):
    import subprocess

    import pytest

    from nightshift.supervisor.cli.init.holdout import HoldoutError
    from nightshift.supervisor.cli.init.holdout_tests import move_tests, plan_tests, store_for
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_lib.py").write_text("def test_lib():\n    pass\n")
    (ws / "tests" / "test_old.py").write_bytes(LATIN1)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    with pytest.raises(HoldoutError, match="tests/test_old.py is not UTF-8 text, so it cannot be split"):
        plan_tests(ws, ["tests/test_old.py::test_one"])
    move_tests(ws, plan_tests(ws, ["tests/test_old.py"]))
    assert (store_for(ws) / "files" / "tests" / "test_old.py").read_bytes() == LATIN1
    assert not (ws / "tests" / "test_old.py").exists()
    from nightshift.supervisor.verify.heldout_checkout import held_ids
    assert held_ids(store_for(ws) / "files") == ["tests/test_old.py::test_one", "tests/test_old.py::test_two"]
