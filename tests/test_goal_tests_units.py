"""The held-out tests' small parts, without a run: the verdict's deadline counts their run."""
from __future__ import annotations

from supervisor.config.schema import parse_config
from supervisor.shift.verdict_clock import deadline_for

TESTS = '[verify]\ntest_command = "python -m pytest -q"\ntimeout = "10m"\n'


def test_the_verdicts_deadline_counts_the_held_out_tests_run():
    without = deadline_for(parse_config(TESTS))
    held = deadline_for(parse_config(TESTS + 'heldout_tests = "/somewhere/tests"\n'))
    assert held - without == 600.0
