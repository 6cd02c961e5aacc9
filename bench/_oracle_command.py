"""bench_oracle's case of `nightshift compare` as a user runs it with an oracle command (issue 44): the candidate is
made by a copy command run in nightshift's sandbox (`cp SOURCE cand.dat`, SOURCE a folder under ~/.cache: outside the
workspace, so the kept-copies scan, which parses every table in the workspace with a reference's shape, does not parse
a second 20 MB table, and outside /tmp, which the sandbox replaces with a private one), then compared. Beside it: numdiff
on the same files, pyarrow's parse of both (a bare parse) and the command's own time outside any sandbox. Goals: the
whole compare >= 15x faster than numdiff, and <= 2x a bare parse plus the command's own time.

The sandbox's probes are kept for the boot (supervisor/sandbox/probe_cache.py): the first compare in a fresh state
folder probes (two bubblewrap runs, libseccomp's binding loaded), the ones after do not; both are printed.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from _common import at_least, verdict

COMMAND_CONFIG = ('[oracle]\ncommand = "cp {source} cand.dat"\n[[oracle.compare]]\nname = "big"\n'
                  'candidate = "cand.dat"\nreference = "ref.dat"\nx = "l"\nrtol = {rtol!r}\natol = 0\n'
                  'tolerance = "either"\n')


def command_bench(folder: Path, rows: int, repeat: int, rtol: float, make_workspace, run, ours, span,
                  parse: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    ref, cand = make_workspace(folder, rows)
    cache = Path.home() / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    outside = Path(tempfile.mkdtemp(prefix="nightshift-bench-source-", dir=cache))
    source = outside / "cand.dat"
    shutil.move(str(cand), source)
    (folder / "nightshift.toml").write_text(COMMAND_CONFIG.format(rtol=rtol, source=source))
    print(f"\n== `nightshift compare` with its oracle command in the sandbox ({rows} rows x 6, a copy command)")
    state = Path(tempfile.mkdtemp(prefix="nightshift-bench-state-"))
    saved = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)  # a fresh state folder: the first compare probes the sandbox
    try:
        ours(folder)  # validates the new nightshift.toml once (pydantic), as every first compare after an edit
        shutil.rmtree(state / "nightshift" / "sandbox", ignore_errors=True)
        cold = ours(folder)
        print(f"first compare of the boot (the sandbox probed, libseccomp loaded): {cold['wall']:.2f} s")
        runs, parses, copies, numdiffs = [], [], [], []
        for n in range(repeat):
            copies.append(run(["cp", str(source), str(folder / "copy.tmp")])[0])
            parses.append(run([sys.executable, "-c", parse, str(ref), str(source)])[0])
            runs.append(ours(folder))
            if n < 2 and shutil.which("numdiff"):
                numdiffs.append(run(["numdiff", "-q", "-a", "0", "-r", str(rtol), str(ref), str(source)])[0])
    finally:
        if saved is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = saved
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)
    (folder / "copy.tmp").unlink(missing_ok=True)
    best = min(runs, key=lambda r: r["wall"])
    print(f"ours, whole process with the command: {span([r['wall'] for r in runs])} over {repeat} runs, "
          f"{'PASS' if best['passed'] else 'FAIL'}")
    floor = min(parses) + min(copies)
    print(f"  bare parse {span(parses)} + the command's own time {span(copies, 's', 3)}: ours is "
          f"{best['wall'] / floor:.2f}x that (goal <= 2x: {verdict(best['wall'] <= 2 * floor)})")
    if numdiffs:
        print(f"  numdiff -a 0 -r {rtol:g}: {span(numdiffs)}")
        print(at_least("x faster than numdiff (best)", min(numdiffs) / best["wall"], 15, "x"))
    else:
        print("  numdiff: not installed (.ci/tools/numdiff.sh installs it)")
