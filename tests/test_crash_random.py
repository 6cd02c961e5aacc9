"""Randomized crashes: kill -9 of the supervisor at random moments (and once of the run's tmux server), then
resume. A handful of trials per suite run; bench/bench_crash.py runs hundreds. NIGHTSHIFT_CRASH_SEED replays."""
from __future__ import annotations

import os
import random

import pytest

from tests.crash_trials import run_trial
from tests.fixtures_core import require_tool

BASE_SEED = int(os.environ.get("NIGHTSHIFT_CRASH_SEED", random.randrange(1 << 30)))
TRIALS = int(os.environ.get("NIGHTSHIFT_CRASH_TRIALS", "4"))


@pytest.mark.parametrize("n", range(TRIALS))
def test_random_kill_9_then_resume_loses_nothing(n, tmp_path):
    require_tool("tmux")
    require_tool("git")
    seed = BASE_SEED + n
    result = run_trial(seed, tmp_path, kill_server=n == TRIALS - 1)
    assert result.ok, f"seed {seed} (replay: NIGHTSHIFT_CRASH_SEED={BASE_SEED}): {result.problems}"
