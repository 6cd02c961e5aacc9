"""Benchmark of the calibration over decades (issue 44) on bench_init's reference folder: 100 files, 1 GB in all
(CLASS-style text tables, .npy, .npz and HDF5 of ~10 MB each). init writes the comparisons; then, in one process, for
every comparison: the oracle's own time (the reference compared with itself: what a verdict's comparison costs), the
whole calibration `nightshift check` runs on it, and within it the sweep over the decades of |reference|
(calibrate_decades.py, with the round-off floor it measures where a region cannot fail). Goal: the sweep under 10% of
the oracle's time. Times are CPU seconds of this process (time.process_time: a shared machine's load does not move
them). Prints the sums and the ratio. Not a test.

    .venv/bin/python bench/bench_calibration.py [--files 100] [--total-mb 1024] [--keep DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_init import make_folder  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--total-mb", type=int, default=1024)
    parser.add_argument("--keep", help="build the folder here and keep it")
    args = parser.parse_args()
    from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
    from nightshift.supervisor.config.schema import load_config
    from nightshift.supervisor.verify.oracle import calibrate as calibrate_module
    from nightshift.supervisor.verify.oracle import calibrate_decades, calibrate_field as field_module
    from nightshift.supervisor.verify.oracle.compare import compare_tables
    from nightshift.supervisor.verify.oracle.field import open_field
    from nightshift.supervisor.verify.oracle.field_compare import compare_fields
    from nightshift.supervisor.verify.oracle.readers import read_table, split_part

    spent = {"sweep": 0.0}

    def timed(function):
        def wrapper(*a, **k):
            t0 = time.process_time()
            try:
                return function(*a, **k)
            finally:
                spent["sweep"] += time.process_time() - t0
        return wrapper

    # the sweep (the floor it measures is inside it), in both calibrations (they import the name)
    for module in (calibrate_module, field_module):
        module.decade_lines = timed(calibrate_decades.decade_lines)

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nightshift-bench-cal-"))
    try:
        ws = base / "ws"
        ws.mkdir(parents=True)
        size = make_folder(ws / "reference", args.files, args.total_mb)
        init_workspace(ws, InitOptions(goal="agree with CLASS to 0.1%", reference_dir="reference"))
        oracle_s = calibration_s = 0.0
        notes = problems = 0
        comps = load_config(ws).oracle.compare
        for comp in comps:
            path, part = split_part(comp.reference)
            where = ws / path
            t0 = time.process_time()
            with open_field(where, part, "reference") as found:
                is_field = found is not None and not comp.columns and comp.x is None
            if is_field:
                with open_field(where, part, "reference") as a, open_field(where, part, "reference") as b:
                    compare_fields(comp, a, b, (part or where.name).strip("/"))
            else:
                table = read_table(where, part)
                compare_tables(comp, table, table)
            t1 = time.process_time()
            found = field_module.calibrate_field(comp, where, part) if is_field else None
            if found is None:
                found = calibrate_module.calibrate(comp, read_table(where, part))
            t2 = time.process_time()
            oracle_s += t1 - t0
            calibration_s += t2 - t1
            notes += len(found.notes)
            problems += len(found.problems)
        share = spent["sweep"] / oracle_s
        print(f"{len(comps)} comparisons over {size / (1 << 30):.2f} GB of references")
        print(f"  the oracle (each reference against itself, read included): {oracle_s:.2f} s")
        print(f"  the whole calibration check runs: {calibration_s:.2f} s ({calibration_s / oracle_s:.2f}x the oracle)")
        print(f"  of it, the sweep over decades with its round-off floor: {spent['sweep']:.3f} s = {100 * share:.1f}% "
              f"of the oracle's time (goal < 10%: {'ok' if share < 0.10 else 'MISSED'}); {notes} notes, "
              f"{problems} problems")
        return 0 if share < 0.10 else 1
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
