"""The field part of bench_oracle.py (issue 29): a 3-D float64 field of N^3 (512^3: 1 GiB) in HDF5 against its
reference, `nightshift compare` as a whole process beside `h5diff -p` (HDF5's own comparer, Debian's hdf5-tools)
on the same pair. Goals: at most 2x h5diff's time and a peak RSS within 2x one field (the comparer streams the
fields in blocks). Two cases: every element within tolerance, and one element off (both tools find it).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from _common import verdict

RTOL = 1e-6  # the candidate is the reference to ~1e-9 relative: passes
SLAB = 16  # planes written at a time (16 x 512^2 x 8 B = 32 MB)


def make_pair(folder: Path, n: int) -> tuple[Path, Path]:
    import h5py

    ref_path, cand_path = folder / "ref.h5", folder / "cand.h5"
    rng = np.random.default_rng(7)
    axis = np.linspace(0.0, 1.0, n)
    with h5py.File(ref_path, "w") as ref, h5py.File(cand_path, "w") as cand:
        a = ref.create_dataset("T", shape=(n, n, n), dtype="f8")
        b = cand.create_dataset("T", shape=(n, n, n), dtype="f8")
        yy, zz = np.meshgrid(axis, axis, indexing="ij")
        for lo in range(0, n, SLAB):
            x = axis[lo:lo + SLAB, None, None]
            block = 280.0 + 10 * np.sin(3 * x) * np.cos(2 * yy) + 0.5 * zz + 1e-3 * x * yy * zz
            a[lo:lo + SLAB] = block
            b[lo:lo + SLAB] = block * (1 + rng.uniform(-1e-9, 1e-9, block.shape))
    return ref_path, cand_path


def move_one(cand_path: Path, n: int) -> None:
    import h5py

    with h5py.File(cand_path, "r+") as cand:
        at = (n // 3, n // 2, n // 5)
        cand["T"][at] = cand["T"][at] * (1 + 10 * RTOL)


def write_config(folder: Path) -> None:
    (folder / "nightshift.toml").write_text(
        '[oracle]\n[[oracle.compare]]\nname = "T"\ncandidate = "cand.h5"\nreference = "ref.h5"\nfields = ["T"]\n'
        f"rtol = {RTOL!r}\n")


def field_bench(folder: Path, n: int, repeat: int, run, ours, span) -> None:
    if not shutil.which("h5diff"):
        print("\n== field: h5diff not installed (.ci/tools/hdf5-tools.sh installs Debian's hdf5-tools); skipped")
        return
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    ref, cand = make_pair(folder, n)
    field_bytes = ref.stat().st_size
    print(f"\n== field: {n}^3 float64 in HDF5, 2 files of {field_bytes / 2 ** 30:.2f} GiB; rtol {RTOL:g}")
    write_config(folder)
    ours(folder)  # the first compare validates nightshift.toml in full; the timed ones read it validated
    for label in ("every element within tolerance", "one element off by 10x the tolerance"):
        if label.startswith("one"):
            move_one(cand, n)
        runs, h5 = [], []
        for _ in range(repeat):  # interleaved: both tools see the same load on a shared machine
            wall, code, peak, out = run(["h5diff", "-p", repr(RTOL), str(ref), str(cand), "/T", "/T"])
            h5.append((wall, code, out.strip().splitlines()[-1:] if out.strip() else []))
            runs.append(ours(folder))
        best = min(runs, key=lambda r: r["wall"])
        h5_best = min(w for w, _, _ in h5)
        same = (h5[0][1] == 0) == best["passed"]
        print(f"[{label}] ours, whole process: {span([r['wall'] for r in runs])} over {repeat} runs, "
              f"{'PASS' if best['passed'] else 'FAIL'}: {best['summary'][:120]}")
        print(f"  h5diff -p {RTOL:g}: {span([w for w, _, _ in h5])}, exit {h5[0][1]} "
              f"({' '.join(h5[0][2])[:80] or 'no differences'}); same verdict: {verdict(same)}")
        print(f"  ours / h5diff (best against best): {best['wall'] / h5_best:.2f}x (goal <= 2x: "
              f"{verdict(best['wall'] <= 2 * h5_best)})")
        ratios = [r["peak"] / field_bytes for r in runs]
        print(f"  peak RSS {span([r['peak'] / 2 ** 20 for r in runs], 'MiB', 0)} = {span(ratios, 'x', 2)} one field "
              f"(goal <= 2x: {verdict(min(ratios) <= 2)})")
