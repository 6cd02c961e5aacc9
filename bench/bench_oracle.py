"""Benchmark of the oracle on a 1,000,000-row x 6-column table (about 100 MB of text) against a perturbed copy.

Prints our time and peak memory beside numdiff 5.9 (run with equivalent tolerances: -a 0 -r RTOL, which is
our tolerance = "either" with atol 0) and beside the fastest CSV reader here (pyarrow.csv) parsing the same two
files. Goals (issue 4): >= 10x faster than numdiff with the same pass/fail, within 2x of the fastest reader's
parse time, peak memory under 3x the file size. Not a test: it prints figures and ratios.

    .venv/bin/python bench/bench_oracle.py [--rows 1000000] [--keep DIR] [--aligned]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PASS_RTOL, FAIL_RTOL = 1e-5, 1e-7  # the perturbation is ~1e-6 relative (max ~5e-6)

# Peak memory is the child's VmHWM: unlike ru_maxrss it is not inherited from the parent across exec.
CHILD = r'''
import json, sys, time
from pathlib import Path
from supervisor.config.oracle import OracleConfig
from supervisor.verify.oracle import run_oracle
def hwm_kb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
base = hwm_kb()
ws, rtol = Path(sys.argv[1]), float(sys.argv[2])
cfg = OracleConfig.model_validate({"compare": [{"name": "big", "candidate": "cand.dat", "reference": "ref.dat",
                                               "x": "l", "rtol": rtol, "atol": 0, "tolerance": "either"}]})
t0 = time.perf_counter()
out = run_oracle(cfg, ws, ws / "oracle-out", None)
print(json.dumps({"seconds": time.perf_counter() - t0, "passed": out.passed, "summary": out.summary,
                  "peak_kb": hwm_kb(), "base_kb": base}))
'''

PARSE = r'''
import json, resource, sys, time
import pyarrow as pa, pyarrow.csv as pc
t0 = time.perf_counter()
for name in sys.argv[2:]:
    opts = pc.ReadOptions(skip_rows=1, autogenerate_column_names=True)
    parse = pc.ParseOptions(delimiter=sys.argv[1] if sys.argv[1] != "ws" else " ")
    table = pc.read_csv(name, read_options=opts, parse_options=parse)
    cols = [c.to_numpy() for c in table.columns]
print(json.dumps({"seconds": time.perf_counter() - t0}))
'''


def make_files(folder: Path, rows: int, aligned: bool) -> tuple[Path, Path]:
    rng = np.random.default_rng(1)
    ell = np.arange(2, rows + 2, dtype=float)
    ref = np.column_stack([ell] + [20 + k + 10 * np.sin(ell * 1e-4 * (k + 1)) for k in range(5)])
    cand = ref.copy()
    cand[:, 1:] *= 1 + rng.normal(0, 1e-6, size=(rows, 5))
    fmt = "%17.10e" if aligned else "%.10e"
    header = "1:l 2:TT 3:EE 4:BB 5:TE 6:PP"
    for name, data in (("ref.dat", ref), ("cand.dat", cand)):
        np.savetxt(folder / name, data, fmt=fmt, delimiter="  " if aligned else " ", header=header,
                   comments="# ")
    return folder / "ref.dat", folder / "cand.dat"


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0, done


def ours(folder: Path, rtol: float, repeat: int) -> tuple[float, dict]:
    """The best of ``repeat`` runs, each in a fresh process (the machine may be shared: the minimum is the
    figure least disturbed by other work)."""
    best = None
    for _ in range(repeat):
        wall, done = timed([sys.executable, "-c", CHILD, str(folder), str(rtol)])
        if done.returncode != 0:
            sys.exit(f"bench: the oracle child failed: {done.stderr.strip()[-400:]}")
        child = json.loads(done.stdout)
        if best is None or child["seconds"] < best[1]["seconds"]:
            best = (wall, child)
    return best


def parse_time(ref: Path, cand: Path, repeat: int) -> float | None:
    times = []
    for _ in range(repeat):
        _, done = timed([sys.executable, "-c", PARSE, "ws", str(ref), str(cand)])
        if done.returncode != 0:
            return None
        times.append(json.loads(done.stdout)["seconds"])
    return min(times)


def numdiff(ref: Path, cand: Path, rtol: float) -> tuple[float, bool] | None:
    if not shutil.which("numdiff"):
        return None
    wall, done = timed(["numdiff", "-q", "-a", "0", "-r", str(rtol), str(ref), str(cand)])
    return wall, done.returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keep", help="build the files here and keep them")
    ap.add_argument("--aligned", action="store_true", help="CLASS-style aligned columns (numpy loadtxt path)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for our time and pyarrow's")
    ap.add_argument("--no-numdiff", action="store_true", help="skip numdiff (about a minute per run)")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="nightshift-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    try:
        ref, cand = make_files(folder, args.rows, args.aligned)
        size = ref.stat().st_size
        print(f"files: 2 x {size / 1e6:.1f} MB, {args.rows} rows x 6 columns ({'aligned' if args.aligned else 'single-space'})")
        for label, rtol in (("passing", PASS_RTOL), ("failing", FAIL_RTOL)):
            # interleaved, best of N each: both figures see the same load on a shared machine
            parse_s, wall, child = None, None, None
            for _ in range(args.repeat):
                p = parse_time(ref, cand, 1)
                w, c = ours(folder, rtol, 1)
                parse_s = p if parse_s is None or (p is not None and p < parse_s) else parse_s
                if child is None or c["seconds"] < child["seconds"]:
                    wall, child = w, c
            peak = child["peak_kb"] * 1024
            print(f"\n[{label}: rtol {rtol:g}] ours (best of {args.repeat}): {child['seconds']:.2f} s in run_oracle ({wall:.2f} s with "
                  f"interpreter start), {'PASS' if child['passed'] else 'FAIL'}")
            print(f"  peak RSS {peak / 1e6:.0f} MB = {peak / size:.2f}x one file "
                  f"({(peak - child['base_kb'] * 1024) / 1e6:.0f} MB above the imported interpreter)")
            print(f"  {child['summary']}")
            if parse_s is not None and args.aligned:
                print(f"  pyarrow.csv cannot split runs of spaces: it reads these files as string columns in "
                      f"{parse_s:.2f} s (not a like-for-like anchor); ours uses numpy's C loadtxt here")
            elif parse_s is not None:
                print(f"  pyarrow.csv (best of {args.repeat}) parses both files in {parse_s:.2f} s: ours is {child['seconds'] / parse_s:.2f}x "
                      "that (goal <= 2x)")
            nd = None if args.no_numdiff else numdiff(ref, cand, rtol)
            if nd is None:
                print("  numdiff: skipped" if args.no_numdiff else "  numdiff: not installed (.ci/tools/numdiff.sh installs it)")
            else:
                same = "same verdict" if nd[1] == child["passed"] else "DIFFERENT verdict"
                print(f"  numdiff -a 0 -r {rtol:g}: {nd[0]:.2f} s, {'PASS' if nd[1] else 'FAIL'} ({same}); ours is "
                      f"{nd[0] / wall:.1f}x faster with interpreter start (goal >= 10x)")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
