"""Benchmark of `nightshift init --reference-dir` on a reference folder of 100 files, 1 GB in all (text tables in
the CLASS style, .npy, .npz and HDF5 files of ~10 MB each, generated in a temporary folder and deleted after).

init reads only headers and a sample of each file and fingerprints the references (no full hash or copy above
64 MB), so it should not depend on the folder's size. Goal (issue 16): under 2 s wall time. Prints the wall time
of the whole command (a fresh process: Python start-up and imports included), the time spent surveying the
references, and the peak memory (VmHWM) of the process. Not a test: it prints figures and ratios.

    .venv/bin/python bench/bench_init.py [--files 100] [--total-mb 1024] [--keep DIR]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 2.0

CHILD = r'''
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.cli.init.references import survey_references
t1 = time.perf_counter()
ws = Path(sys.argv[1])
survey = survey_references(ws, "reference", "out", "agree with CLASS to 0.1%")
t2 = time.perf_counter()
init_workspace(ws, InitOptions(goal="agree with CLASS to 0.1%", reference_dir="reference", survey=survey))
t3 = time.perf_counter()
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f} {hwm} {len(survey.comparisons)} {len(survey.skipped)}")
'''


def make_folder(ref: Path, files: int, total_mb: int) -> int:
    """One file of each kind is generated, the rest are copies of it (what init reads does not change)."""
    import h5py

    ref.mkdir(parents=True)
    each = total_mb * (1 << 20) // files
    rows = max(10, each // 88)
    ell = np.arange(2, 2 + rows, dtype=float)
    data = np.column_stack([ell, 1e3 / ell, 2e3 / ell, np.sin(ell)])
    seeds = {}
    text = ref / "seed.dat"
    with open(text, "w") as handle:
        handle.write("# 1:l 2:TT 3:EE 4:TE\n")
        np.savetxt(handle, data[: max(10, each // 88)], fmt="%.14e")  # 4 x 21 characters and 4 separators
    seeds["dat"] = text
    wide = np.random.default_rng(1).random((each // 8 // 4, 4))
    wide[:, 0] = np.arange(len(wide))
    np.save(ref / "seed.npy", wide)
    seeds["npy"] = ref / "seed.npy"
    np.savez(ref / "seed.npz", x=wide[:, 0], a=wide[:, 1], b=wide[:, 2], c=wide[:, 3])
    seeds["npz"] = ref / "seed.npz"
    with h5py.File(ref / "seed.h5", "w") as handle:
        group = handle.create_group("spectra")
        for i, name in enumerate(("k", "p1", "p2", "p3")):
            group[name] = wide[:, i]
    seeds["h5"] = ref / "seed.h5"
    kinds = ["dat"] * 60 + ["npy"] * 20 + ["npz"] * 10 + ["h5"] * 10
    for n in range(files):
        kind = kinds[n % len(kinds)]
        shutil.copyfile(seeds[kind], ref / f"f{n:03d}.{kind}")
    for seed in seeds.values():
        seed.unlink()
    return sum(p.stat().st_size for p in ref.iterdir())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--total-mb", type=int, default=1024)
    parser.add_argument("--keep", help="build the folder here and keep it")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nightshift-bench-init-"))
    try:
        ws = base / "ws"
        ws.mkdir(parents=True)
        t0 = time.perf_counter()
        size = make_folder(ws / "reference", args.files, args.total_mb)
        print(f"reference folder: {args.files} files, {size / (1 << 30):.2f} GB (made in "
              f"{time.perf_counter() - t0:.0f} s)")
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, str(ws)], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        if out.returncode != 0:
            print(out.stderr)
            return 1
        imports, survey, write, hwm_kb, compared, skipped = out.stdout.split()
        print(f"init wall time {wall:.2f} s (goal < {GOAL_SECONDS:g} s: {wall / GOAL_SECONDS:.2f} of it)\n"
              f"  imports {float(imports):.2f} s, survey of the references {float(survey):.2f} s, "
              f"writing and fingerprinting {float(write):.2f} s\n"
              f"  {compared} comparisons written, {skipped} files skipped\n"
              f"peak memory {int(hwm_kb) / 1024:.0f} MB ({int(hwm_kb) * 1024 / size:.3f} x the folder's size)")
        return 0 if wall < GOAL_SECONDS else 1
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
