"""The test ratchet's readers on real runner output: JUnit from a real pytest run (node ids for modules, classes and
parameters; skipped, xfailed and modules that fail to collect), the totals runners print, and a test's definition
compared through its AST (what "changed" and "no longer defines it" rest on)."""
from __future__ import annotations

import subprocess
import sys

from nightshift.supervisor.verify.junit import collection_errors, parse_junit, passed_total
from nightshift.supervisor.verify.ratchet import Ratchet, definition, judge

SUITE = '''import pytest


def test_plain():
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_xfailed():
    assert 0


class TestGroup:
    @pytest.mark.parametrize("x", [1, 2])
    def test_each(self, x):
        assert x
'''


def run_pytest(folder, *args):
    junit = folder / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *args],
                   cwd=folder, capture_output=True, text=True)
    return parse_junit(junit, folder)


def test_junit_from_pytest_is_read_as_node_ids_with_every_outcome(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(SUITE)
    (tmp_path / "tests" / "test_broken.py").write_text("import not_a_module_anywhere\n")
    results = run_pytest(tmp_path, "--continue-on-collection-errors", "tests")
    outcomes = {t: r["outcome"] for t, r in results.items()}
    assert outcomes == {"tests/test_x.py::test_plain": "passed", "tests/test_x.py::test_skipped": "skipped",
                        "tests/test_x.py::test_xfailed": "xfailed", "tests/test_x.py::TestGroup::test_each[1]": "passed",
                        "tests/test_x.py::TestGroup::test_each[2]": "passed",
                        "tests/test_broken.py": "uncollectable"}
    assert results["tests/test_x.py::test_skipped"]["message"] == "not today"
    assert collection_errors(results) == ["tests/test_broken.py: ModuleNotFoundError: No module named "
                                          "'not_a_module_anywhere'"]


def test_a_broken_test_file_names_each_of_its_tests_of_the_set(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(SUITE)
    before = {t for t, r in run_pytest(tmp_path, "tests").items() if r["outcome"] == "passed"}
    (tmp_path / "tests" / "test_x.py").write_text("import not_a_module_anywhere\n" + SUITE)
    results = run_pytest(tmp_path, "tests")
    regressed, lines = judge(Ratchet(kept=before, baseline=before), results, tmp_path)
    assert set(regressed) == before
    assert "vanished: tests/test_x.py::TestGroup::test_each[1] (its file fails to collect: E   ModuleNotFoundError: " \
           "No module named 'not_a_module_anywhere')" in lines


def test_totals_from_the_runners_own_summaries():
    assert passed_total("....F.\n=== 5 passed, 1 failed in 0.12s ===\n") == 5
    assert passed_total("5 passed, 2 deselected in 0.01s") == 5
    assert passed_total("1 failed in 0.1s") == 0
    assert passed_total("..F\n---------\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n") == 2
    assert passed_total("...\nRan 3 tests in 0.001s\n\nOK\n") == 3
    assert passed_total("95% tests passed, 2 tests failed out of 44\n\nTotal Test time (real) =   1.2 sec\n") == 42
    assert passed_total("test result: ok. 44 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n") == 44
    assert passed_total("all good\n") is None


def test_a_definition_is_its_decorators_and_body():
    plain = b"def test_a():\n    assert f() == 1\n"
    assert definition(plain, ["test_a"]) == definition(b"# a comment\n\ndef test_a():\n    assert f() == 1\n", ["test_a"])
    assert definition(plain, ["test_a"]) != definition(b"@skip\ndef test_a():\n    assert f() == 1\n", ["test_a"])
    assert definition(plain, ["test_a"]) != definition(b"def test_a():\n    f()\n", ["test_a"])
    assert definition(b"class T:\n    def test_b(self): pass\n", ["T", "test_b"]) is not None
    assert definition(plain, ["test_b"]) is None and definition(b"def (:", ["test_a"]) is None


def test_claude_codes_hook_refuses_the_agent_a_release_and_nothing_else_that_mentions_it():
    from nightshift.supervisor.shift.policy_check import decide

    policy = {"workspace": "/ws"}
    for command in ("nightshift release RUN tests/test_io.py --why slow", "cd /ws && nightshift release RUN t --why x",
                    f"{sys.executable} -m nightshift.supervisor.cli.main release RUN t --why x", "/usr/local/bin/nightshift release R t"):
        assert decide(policy, "Bash", {"command": command})[0] == "person_only", command
    for command in ("nightshift claim done --summary 'we release the GIL now'", "git tag release-1",
                    "nightshift status RUN"):
        assert decide(policy, "Bash", {"command": command}) is None, command


def test_skipped_xfailed_and_deselected_tests_of_the_set_are_named_each_with_why(tmp_path):
    from tests.fixtures_ratchet import BROKEN_UTIL, MARK_CONFTEST, UTIL, write_suite

    write_suite(tmp_path)
    before = {t for t, r in run_pytest(tmp_path, "tests").items() if r["outcome"] == "passed"}
    ratchet = Ratchet(kept=before, baseline=before)
    cases = {"skip": "skipped: tests/test_io.py::test_roundtrip (passed at the start; now skipped: slow)",
             "xfail": "xfailed: tests/test_io.py::test_roundtrip (passed at the start; now marked as an expected "
                      "failure: slow)"}
    for mark, line in cases.items():
        if mark == "xfail":  # a marked test that still passes is XPASS, which JUnit reports as passed: break it
            (tmp_path / "suite" / "util.py").write_text(BROKEN_UTIL)
        (tmp_path / "tests" / "conftest.py").write_text(MARK_CONFTEST.replace("{mark}", mark))
        assert judge(ratchet, run_pytest(tmp_path, "tests"), tmp_path)[1] == [line]
    (tmp_path / "tests" / "conftest.py").unlink()
    (tmp_path / "suite" / "util.py").write_text(UTIL)
    lines = judge(ratchet, run_pytest(tmp_path, "tests", "-k", "not test_roundtrip or empty"), tmp_path)[1]
    assert lines == ["vanished: tests/test_io.py::test_roundtrip (deselected: its file still defines it but the test "
                     "command no longer runs it; a conftest.py, pytest.ini, setup.cfg, tox.ini or pyproject.toml "
                     "option, or the command, changed what runs)"]
