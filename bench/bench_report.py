"""Benchmark of `nightshift report`: the time to build the HTML report of a 10-event run and of a 1,000-shift,
1,000,000-event run (goal: under 3 s for the large one), with the ratio between them.

The large run is tests/fixtures_report.write_long_run with 1,000 shifts of 125 turns (per turn: agent started
and stopped, the Slurm job running and completed with its core-hours, verify started and finished, a commit,
a push-back: every event the report reads), its snapshot written at the end as the supervisor keeps it. Measured in process (the verb's work, not Python's
start-up) and once as the `nightshift report` command. Prints figures; asserts nothing.

Before / after: the report of the large run took 1.53 s (the anchor printed below), then 2.34 s once the held-out
exam's figures were read per verdict: for each of the ~4,000 timeline points the private folder was found again (a
path resolution and a hash each) and a file that is not there was opened. The held-out section now finds and lists
the folder once; both ways are timed here on the same run, and the whole report against the anchor.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import against_goal, info  # noqa: E402
from nightshift.supervisor.cli.report.verb import build_report  # noqa: E402
from tests.fixtures_report import write_long_run  # noqa: E402

REPEATS = 3
ANCHOR_S = 1.53  # the large report before the held-out reads grew (same machine kind)


def small_run(root: Path) -> Path:
    run = write_long_run(root, shifts=1, turns=1, run_id="20261120-220000-tiny")
    return run.root


def timed(run_root: Path, out: Path) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        build_report(run_root, out)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def heldout_reads(run_root: Path) -> tuple[float, float]:
    """(per verdict, as before; one listing, as now): seconds to read the timeline's held-out figures."""
    from nightshift.supervisor.cli.report.data import gather
    from nightshift.supervisor.run.heldout import read_private, read_private_many

    keys = [(p["shift"], p["turn"]) for p in gather(run_root).timeline]
    start = time.perf_counter()
    for shift, turn in keys:
        read_private(run_root, shift, turn)
    before = time.perf_counter() - start
    start = time.perf_counter()
    read_private_many(run_root, keys)
    return before, time.perf_counter() - start


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        tmp = Path(tmp)
        tiny = small_run(tmp / "tiny")
        start = time.perf_counter()
        big = write_long_run(tmp / "big", shifts=1000, turns=125).root
        made = time.perf_counter() - start
        n_events = sum(1 for _ in open(big / "events.jsonl", "rb"))
        n_tiny = sum(1 for _ in open(tiny / "events.jsonl", "rb"))
        print(f"bench_report: {n_tiny}-event run vs {n_events}-event run "
              f"({(big / 'events.jsonl').stat().st_size / 1e6:.0f} MB log, built in {made:.0f} s)")
        build_report(tiny, tmp / "warm.html")  # imports (matplotlib) once, as any first call pays them
        t_small = timed(tiny, tmp / "tiny.html")
        t_big = timed(big, tmp / "big.html")
        cmd_start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "report", str(big), "-o", str(tmp / "cli.html")],
                       check=True, capture_output=True)
        t_cli = time.perf_counter() - cmd_start
        print(info(f"report of the {n_tiny}-event run (median of {REPEATS})", t_small, "s"))
        print(against_goal(f"report of the {n_events}-event run (median of {REPEATS})", t_big, 3.0, "s"))
        print(against_goal("`nightshift report` command on it (with Python start-up)", t_cli, 3.0, "s"))
        print(against_goal(f"the same, against the {ANCHOR_S} s anchor (+10%)", t_big, round(ANCHOR_S * 1.1, 3), "s"))
        before, after = heldout_reads(big)
        print(info("held-out figures of every timeline point, before (s)", round(before, 3), "s"))
        print(info("held-out figures of every timeline point, after (s)", round(after, 3), "s"))
        print(info("ratio large / small", round(t_big / t_small, 2) if t_small else float("nan"), "x"))
        print(info("report size (large run)", (tmp / "big.html").stat().st_size // 1024, "KiB"))
        print(json.dumps({"small_s": round(t_small, 3), "large_s": round(t_big, 3), "cli_s": round(t_cli, 3),
                          "events": n_events, "heldout_before_s": round(before, 3),
                          "heldout_after_s": round(after, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
