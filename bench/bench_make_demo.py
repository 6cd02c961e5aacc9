"""Benchmark: `make demo` as a new user meets it (issue 40), from a clean clone of this repository's HEAD.

cold: a fresh clone, no .venv and an empty pip cache (a first-time user's machine; the packages still come from the
      registry this machine reaches, so the figure includes their download).
warm: `make demo` again in the same clone (the venv is there: only the demo runs).
Also the part of cold spent before the demo starts (the venv and pip), from the clock at the line that starts it.
The README's quick start quotes these figures. Goal: none fixed by the issue; the anchor is the issue's
1 min 32 s cold (pip about 65 s) and 21 s warm.

Run: .venv/bin/python bench/bench_make_demo.py [--keep]  (needs git, make, and what `make demo` installs)
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _common import info  # noqa: E402

COLD_ANCHOR_S, WARM_ANCHOR_S, PIP_ANCHOR_S = 92.0, 21.0, 65.0


def timed_make_demo(clone: Path, env: dict[str, str]) -> tuple[float, float | None, int]:
    """(seconds in all, seconds until the demo itself started (None: it never did), exit code)."""
    t0 = time.monotonic()
    started = None
    proc = subprocess.Popen(["make", "demo"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if started is None and "nightshift demo" in line and "bin/nightshift" in line:
            started = time.monotonic() - t0
    return time.monotonic() - t0, started, proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nightshift-bench-demo-"))
    clone = work / "nightshift"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "PIP_CACHE_DIR": str(work / "pip-cache")}  # empty: nothing downloaded before
    env.pop("VIRTUAL_ENV", None)
    print(f"bench_make_demo: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; clone of "
          f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}")
    try:
        cold, setup, rc = timed_make_demo(clone, env)
        if rc != 0:
            print(f"make demo failed (exit {rc}) in {clone}")
            return 1
        warm, _, rc = timed_make_demo(clone, env)
        print(info("make demo, cold (fresh clone, empty pip cache)", cold, "s"), f"  (issue's anchor {COLD_ANCHOR_S:.0f} s,"
              f" ratio {cold / COLD_ANCHOR_S:.2f})")
        if setup is not None:
            print(info("  of which the venv and pip, before the demo starts", setup, "s"),
                  f"  (anchor {PIP_ANCHOR_S:.0f} s, ratio {setup / PIP_ANCHOR_S:.2f})")
        print(info("make demo, warm (the venv is there)", warm, "s"), f"  (anchor {WARM_ANCHOR_S:.0f} s, ratio "
              f"{warm / WARM_ANCHOR_S:.2f})")
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end (other work on this machine skews the figures)")
        return 0 if rc == 0 else 1
    finally:
        if args.keep:
            print(f"kept: {clone}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
