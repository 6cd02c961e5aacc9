"""Benchmark of issue 35's kept-copies scan (supervisor/verify/oracle/kept.py): what looking for a reference kept
in the workspace (its bytes, its datasets, the agent's commits) costs a verdict, beside the oracle's own time.

Workspaces, each a git repository with a run's base commit and three commits after it: a 20 MB text reference
(200,000 rows) and its candidate, plus N source files (N = 50, as `nightshift init` leaves it, and 5,000), plus one
file of the reference's size that is not a copy (it must be hashed), an HDF5 input of a field's shape (it must be
read) and a 1-D ``.npy`` input of the table's length (so the text reference's columns are datasets to compare: parsed
at the first verdict, its digests kept after). First verdict (nothing cached) and the verdicts after (digests kept while files stay the same): medians.
Anchor: the oracle's own compare of a 200,000-row table is about 1 s (bench_oracle.py); the scan after the first
verdict is mostly the walk's lstat of every entry (and two git calls), so it grows with the workspace's files.

    .venv/bin/python bench/bench_copies.py [--rounds 20]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nightshift.supervisor.config.oracle import OracleConfig  # noqa: E402
from nightshift.supervisor.verify.oracle import stash, stash_data  # noqa: E402
from nightshift.supervisor.verify.oracle.copies import reference_files  # noqa: E402
from nightshift.supervisor.verify.oracle.kept import kept_copies  # noqa: E402

GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]


def workspace(root: Path, files: int) -> tuple[OracleConfig, str]:
    (root / "reference").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "src").mkdir()
    rows = np.column_stack([np.arange(200_000.0)] + [np.random.default_rng(k).random(200_000) for k in range(5)])
    np.savetxt(root / "reference" / "big.dat", rows, fmt="%.17g", header="l a b c d e")
    np.savetxt(root / "out" / "big.dat", rows * (1 + 1e-9), fmt="%.17g", header="l a b c d e")
    size = (root / "reference" / "big.dat").stat().st_size
    (root / "src" / "same-size.bin").write_bytes(b"x" * size)  # hashed, not a copy
    with h5py.File(root / "reference" / "field.h5", "w") as f:
        f["T"] = np.random.default_rng(9).random((64, 64, 64))
    with h5py.File(root / "src" / "initial.h5", "w") as f:  # the solver's input, of the field's shape
        f["T"] = np.random.default_rng(10).random((64, 64, 64))
    np.save(root / "src" / "profile.npy", np.random.default_rng(11).random(200_000))  # 1-D: a column's shape
    for n in range(files):
        (root / "src" / f"m{n // 100}").mkdir(exist_ok=True)
        (root / "src" / f"m{n // 100}" / f"f{n}.py").write_text(f"X = {n}\n" * 20)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(GIT + ["commit", "-q", "--allow-empty", "-m", "base"], cwd=root, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    for k in range(3):
        (root / "src" / f"work{k}.py").write_text(f"Y = {k}\n")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(GIT + ["commit", "-qm", f"work {k}"], cwd=root, check=True)
    cfg = OracleConfig.model_validate({"compare": [
        {"name": "big", "candidate": "out/big.dat", "reference": "reference/big.dat", "x": "l"},
        {"name": "field", "candidate": "out/field.h5:T", "reference": "reference/field.h5:T"}]})
    return cfg, base


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    print(f"bench_copies: the kept-copies scan per verdict (issue 35), medians of {args.rounds}")
    for files in (50, 5000):
        with tempfile.TemporaryDirectory(prefix="nightshift-bench-copies-") as tmp:
            root = Path(tmp)
            cfg, base = workspace(root, files)
            refs = reference_files(cfg, root, None)
            for cache in (stash._DIGESTS, stash_data._LISTED, stash_data._HASHED, stash_data._TEXT,
                          stash_data._REFERENCE_TABLES):
                cache.clear()
            started = time.perf_counter()
            first = kept_copies(cfg, root, refs, base)
            cold = time.perf_counter() - started
            assert not first.findings, first.findings  # nothing here is a copy
            warm = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                kept_copies(cfg, root, refs, base)
                warm.append(time.perf_counter() - started)
            walk = statistics.median(_timed(lambda: stash.walk(root)) for _ in range(args.rounds))
            print(f"  {files + 9:>5} files: first verdict {cold * 1e3:7.1f} ms (20 MB hashed and parsed, a field read), "
                  f"after {statistics.median(warm) * 1e3:6.1f} ms (of which the walk {walk * 1e3:5.1f} ms)")
    return 0


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
