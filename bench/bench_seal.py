"""Benchmark: the oracle command's wall time with the references out of reach, against without.

Two workspaces: the demo's (one small reference) and a 100 MB reference set (10 tables of 10 MB). The command
is a stand-in solver that writes its candidates from data/ (python start-up included). Three ways, each run
--repeat times (median): no seal; bubblewrap (every reference absent); moved aside (no sandbox: the visible
references taken out of the workspace and put back from the run's store). Goal (issue 14): the boundary adds
less than 5% or 100 ms, whichever is larger.

Run: .venv/bin/python bench/bench_seal.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._common import against_goal, info  # noqa: E402
from nightshift.supervisor.config.oracle import OracleConfig  # noqa: E402
from nightshift.supervisor.verify.oracle import protect_references  # noqa: E402
from nightshift.supervisor.verify.oracle.check import _sealed_command, run_command  # noqa: E402
from nightshift.supervisor.sandbox.boundary import boundary_for_oracle  # noqa: E402
from nightshift.supervisor.sandbox.probe import bwrap_problem  # noqa: E402

SOLVER = ("import pathlib, shutil\npathlib.Path('out').mkdir(exist_ok=True)\n"
          "for p in pathlib.Path('data').glob('*.dat'): shutil.copy(p, 'out/' + p.name)\n")


def workspace(root: Path, files: int, rows: int) -> tuple[Path, OracleConfig, Path]:
    ws = root / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "data").mkdir()
    rng = np.random.default_rng(0)
    compare = []
    for i in range(files):
        table = rng.uniform(0, 1, (rows, 6))
        np.savetxt(ws / "reference" / f"t{i}.dat", table, header="x a b c d e", fmt="%.17g")
        np.savetxt(ws / "data" / f"t{i}.dat", table[:2], header="x a b c d e", fmt="%.17g")
        compare.append({"name": f"t{i}", "candidate": f"out/t{i}.dat", "reference": f"reference/t{i}.dat"})
    (ws / "solver.py").write_text(SOLVER)
    cfg = OracleConfig.model_validate({"command": f"{sys.executable} solver.py", "compare": compare})
    store = root / "run" / "references"
    protect_references(cfg, ws, store)
    return ws, cfg, store


def timed(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.monotonic()
        call()
        times.append(time.monotonic() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    problem = bwrap_problem()
    print("oracle command with the references out of reach" + (f" (no bubblewrap: {problem})" if problem else ""))
    for label, files, rows in (("demo-sized (1 reference, 200 rows)", 1, 200), ("100 MB of references", 10, 95_000)):
        root = Path(tempfile.mkdtemp(prefix="nightshift-bench-seal-"))
        ws, cfg, store = workspace(root, files, rows)
        size = sum(p.stat().st_size for p in (ws / "reference").iterdir()) / 1e6
        out = root / "o"
        out.mkdir()
        plain = timed(lambda: run_command(["bash", "-c", cfg.command], cfg.command, ws, 600, out), repeat)
        print(f" {label}: {size:.1f} MB")
        print(info("  no seal", plain * 1000, "ms"))
        for how in (("auto", "bubblewrap"), ("off", "moved aside")):
            if how[0] == "auto" and problem:
                continue
            boundary = boundary_for_oracle(ws, cfg, how[0])
            wall = timed(lambda: _sealed_command(cfg, cfg.command, ws, out, store, boundary), repeat)
            allowed = max(0.05 * plain, 0.1)
            print(info(f"  {how[1]}", wall * 1000, "ms"))
            print(against_goal(f"  {how[1]}: added (allowed {allowed * 1000:.0f} ms)", (wall - plain) * 1000,
                               allowed * 1000, "ms"))
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
