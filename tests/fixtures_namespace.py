"""Shared parts of the namespace tests (issue 21): a solver's workspace with a visible and a held-out reference
(outside the workspace, as `init --holdout` keeps it), the honest solver, and the real part they need (bubblewrap
that can make namespaces: missing fails under CI=true, skips loudly elsewhere)."""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

REFERENCE = "# 1:x 2:y\n" + "".join(f"{x} {1.0 / (x + 0.123456789):.12f}\n" for x in range(1, 41))
HELDOUT = "# 1:x 2:y\n" + "".join(f"{x} {2.0 / (x + 0.987654321):.12f}\n" for x in range(1, 41))
HONEST = ("import os\nos.makedirs('out', exist_ok=True)\n"
          "open('out/result.dat', 'w').write('# 1:x 2:y\\n' + ''.join(f'{x} {1.0 / (x + 0.123456789):.10f}\\n' "
          "for x in range(1, 41)))\n"
          "open('out/heldout.dat', 'w').write('# 1:x 2:y\\n' + ''.join(f'{x} {2.0 / (x + 0.987654321):.10f}\\n' "
          "for x in range(1, 41)))\n")


def need_namespace() -> None:
    from nightshift.supervisor.sandbox.probe import bwrap_problem

    problem = bwrap_problem()
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"bubblewrap is required in CI ({problem}); make test installs it")
    pytest.skip(f"no namespace on this machine: {problem}")


def setup_references(ws: Path, tmp_path: Path) -> Path:
    """reference/result.dat in the workspace; a held-out table outside it, with a name only this test uses."""
    (ws / "reference").mkdir(exist_ok=True)
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    held = tmp_path / "held" / f"heldout-{uuid.uuid4().hex[:10]}.dat"
    held.parent.mkdir(exist_ok=True)
    held.write_text(HELDOUT)
    return held


def oracle_block(held: str) -> str:
    return (f'\n[oracle]\ncommand = "{sys.executable} solver.py"\n'
            '[[oracle.compare]]\nname = "result"\ncandidate = "out/result.dat"\nreference = "reference/result.dat"\n'
            'rtol = 1e-6\n'
            f'[[oracle.compare]]\nname = "held"\ncandidate = "out/heldout.dat"\nreference = "{held}"\n'
            'heldout = true\nrtol = 1e-6\n')


def run_until_it_rests(workspace, run, timeout: float = 180) -> None:
    """The supervisor until the run ends or is paused (a cheat that never passes spends its budget and pauses),
    then stopped: a paused run must fail a test, never hang it."""
    import subprocess

    from tests.fixtures_core import nightshift, wait_for

    from nightshift.supervisor.shift.launcher import supervise_argv

    proc = subprocess.Popen(supervise_argv(run), cwd=run.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: {"run.paused", "run.finished"} & set(workspace.types(run)), timeout=timeout,
                 what="the run to end or pause")
        if "run.finished" not in workspace.types(run):
            nightshift("stop", run.run_id)
        proc.wait(timeout=60)
    finally:
        proc.kill()
