"""The held-out tests' small parts, without a run: the verdict's deadline counts their run."""
from __future__ import annotations

from supervisor.config.schema import parse_config
from supervisor.shift.verdict_clock import deadline_for

TESTS = '[verify]\ntest_command = "python -m pytest -q"\ntimeout = "10m"\n'


def test_the_verdicts_deadline_counts_the_held_out_tests_run():
    without = deadline_for(parse_config(TESTS))
    held = deadline_for(parse_config(TESTS + 'heldout_tests = "/somewhere/tests"\n'))
    assert held - without == 600.0


def test_the_tests_answers_count_what_the_same_verdicts_reference_exam_released():
    from types import SimpleNamespace

    from supervisor.verify.heldout_tests import check_heldout_tests
    ctx = SimpleNamespace(config=parse_config(TESTS + 'heldout_tests = "/somewhere/tests"\n'),
                          state={"heldout": {"bits": 29.0}})
    check, record = check_heldout_tests(ctx, True, True, oracle_released={"bits": 2.0})  # 29 + 2 + log2(4) > 32
    assert not check.passed and check.summary.startswith("held-out tests: not released")
    assert record["withheld"] and record["withheld_by"] == "[verify] heldout_budget"


def test_one_ladder_for_both_exams_and_an_answer_after_a_pass_costs_a_bit():
    from supervisor.verify import heldout_tests
    from supervisor.verify.oracle.exam import BANDS, answers, ladder
    assert [answers(best) for best in (0, 1, 2, 3)] == [2, 2, 3, 4]  # after a pass: "passes" or "fails", 1 bit
    said = [ladder(before, now, BANDS, "again", lambda b: f"no better ({b})") for before, now in
            [(3, 0), (3, 2), (3, 3), (2, 2), (2, 1), (1, 2), (0, 1), (0, 0)]]
    assert said == [BANDS[0], BANDS[2], BANDS[3], f"no better ({BANDS[2]})", BANDS[1], f"no better ({BANDS[1]})",
                    "again", BANDS[0]]
    assert heldout_tests.ladder is ladder and heldout_tests.answers is answers  # the tests' exam climbs the same one
