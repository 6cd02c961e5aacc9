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
