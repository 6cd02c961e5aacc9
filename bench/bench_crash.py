"""Randomized crash benchmark (issue 11): N trials of a real run whose supervisor is killed with kill -9 at
random moments (one to three times per trial) and, in a tenth of the trials, whose tmux server is killed too;
each ends with a supervisor run to the finish. A trial passes when no shift is lost or doubled, no turn is
launched twice, seq has no gaps, at most one agent lives at any kill, and exactly one run.finished says done
(the checks are in tests/crash_trials.py, shared with tests/test_crash_random.py).

Prints the pass count (goal: N/N) and, for each failed trial, its seed and what broke.

Usage: python bench/bench_crash.py [-n 100] [--seed S]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from _common import info  # noqa: E402
from tests.crash_trials import run_trial  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="number of trials (default 100)")
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = parser.parse_args()
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="bench-crash-state-")  # never the user's registry
    print(f"bench_crash: {args.n} trials, seed {args.seed} (a tenth also kill the run's tmux server)")
    passed, failures, began = 0, [], time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-crash-") as tmp:
        for n in range(args.n):
            result = run_trial(args.seed + n, Path(tmp) / str(n), kill_server=n % 10 == 9)
            passed += result.ok
            if not result.ok:
                failures.append(result)
                print(f"  FAIL seed {result.seed} (kills {result.kills}, server killed {result.server_killed}): "
                      f"{result.problems}", flush=True)
    print(info("trials", args.n, ""))
    print(info("kills of the tmux server", sum(1 for n in range(args.n) if n % 10 == 9), ""))
    print(info("seconds", round(time.monotonic() - began, 1), "s"))
    print(f"  passed {passed}/{args.n}  ({'meets' if passed == args.n else 'MISSES'} the goal {args.n}/{args.n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
