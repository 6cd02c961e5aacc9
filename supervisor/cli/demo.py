"""`nightshift demo`: a small numerical workspace and a scripted, offline agent, supervised end to end.

The workspace asks for an integrator of two ODEs whose exact solutions give the reference outputs. The demo
agent (a script, not a model) first claims done with forward Euler; the oracle measures the error and pushes
it back; it switches to RK4, records the failed approach, and the run ends verified. No network, no model.
"""
from __future__ import annotations

import math
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nightshift.supervisor import gitops
from nightshift.supervisor.cli.init.judge_choice import JudgeChoice
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.run.liveness import supervisor_status

TEST = '''"""The demo's own tests: the solver's output against the exact reference."""
import subprocess
import sys

import numpy as np


def run_solver():
    subprocess.run([sys.executable, "solver.py"], check=True)
    return np.loadtxt("out/trajectory.dat"), np.loadtxt("reference/trajectory.dat")


def test_output_has_the_reference_grid():
    out, ref = run_solver()
    assert out.shape == ref.shape and np.allclose(out[:, 0], ref[:, 0])


def test_agrees_with_reference():
    out, ref = run_solver()
    rel = np.abs(out[:, 1:] - ref[:, 1:]) / np.abs(ref[:, 1:])
    i, j = np.unravel_index(rel.argmax(), rel.shape)
    assert rel.max() <= 1e-6, f"max relative error {rel.max():.3e} > 1e-6 (column {j + 2}, t = {ref[i, 0]:g})"
'''

ORACLE = '''
[oracle]
command = "{python} solver.py"
timeout = "2m"

[[oracle.compare]]
name = "trajectory"
candidate = "out/trajectory.dat"
reference = "reference/trajectory.dat"
x = "t"
columns = ["logistic", "forced"]
rtol = 1e-6
'''

PLAN = ["Write solver.py: integrate both ODEs from t = 0 to 10 and write out/trajectory.dat",
        "Agree with the reference to 1e-6 relative error in every column",
        "Record what was tried, with its numbers, in CHANGELOG.md"]


def build_workspace(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "reference").mkdir(exist_ok=True)
    rows = ["# 1:t 2:logistic 3:forced"]
    for i in range(1001):
        t = i * 0.01
        logistic = 10 / (1 + 99 * math.exp(-t))
        forced = 2 + (math.sin(t) - math.cos(t)) / 2 + 1.5 * math.exp(-t)
        rows.append(f"{t:.6f} {logistic:.15e} {forced:.15e}")
    (path / "reference" / "trajectory.dat").write_text("\n".join(rows) + "\n")
    (path / "tests").mkdir(exist_ok=True)
    (path / "tests" / "test_solver.py").write_text(TEST)
    (path / "README.md").write_text("Demo workspace: integrate y' = y(1 - y/10), y(0) = 0.1 and "
                                    "z' = -z + sin t + 2, z(0) = 3 on [0, 10], step 0.01.\n")
    (path / ".gitignore").write_text("out/\n__pycache__/\n.pytest_cache/\n")
    # The files the work writes exist, as in a project that has them (a solver.py that says none is there yet): where no namespace can be made, Landlock's
    # tier takes no new entry at the workspace's top level beside nightshift.toml (sandbox/confinement.py)
    (path / "solver.py").write_text('raise SystemExit("no solver yet: the agent writes it here")\n')
    (path / "out").mkdir(exist_ok=True)
    init_workspace(path, InitOptions(
        goal="An ODE integrator whose outputs agree with the exact reference to 1e-6 relative error",
        test_command=f"{sys.executable} -m pytest -q tests", agent="demo", plan=PLAN,
        oracle_block=ORACLE.format(python=sys.executable), force=True,
        judge=JudgeChoice(False, "the demo is offline and scripted: no model is asked", "the demo is offline")))
    repo = gitops.open_repo(path)
    gitops.commit_all(repo, "demo workspace: task, tests and exact reference outputs")
    return path


def demo_main(headless: bool, keep_dir: str | None) -> int:
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground, start_detached

    _require_pytest()
    workspace = Path(keep_dir).resolve() if keep_dir else Path(tempfile.mkdtemp(prefix="nightshift-demo-"))
    if keep_dir and (workspace / ".nightshift").exists():
        shutil.rmtree(workspace / ".nightshift")
    print(f"nightshift demo: a scripted, offline demo agent (not a model) in {workspace}")
    build_workspace(workspace)
    backend = "tmux" if shutil.which("tmux") else "local"
    config = resolve_config(workspace, backend=backend)
    print(boundary_line(workspace, config))
    run = create_run(workspace, config)
    print(f"run {run.run_id}: agent in {backend}" + (f" (watch: nightshift attach {run.run_id})" if backend == "tmux" else ""))
    started = time.monotonic()
    if headless:  # the supervisor in this process; the story is told from its events, as when detached
        import threading
        errors: list[BaseException] = []

        def supervise() -> None:
            try:
                run_foreground(run, say=lambda _: None)
            except BaseException as exc:  # noqa: BLE001 - reported below, the demo must not hang
                errors.append(exc)
        worker = threading.Thread(target=supervise, daemon=True)
        worker.start()
        code = _follow(run, alive=worker.is_alive)
        if errors:
            raise errors[0]
    else:
        start_detached(run, config)
        code = _follow(run, alive=lambda: supervisor_status(run.supervisor)["alive"])
    from nightshift.supervisor.sandbox.tier import tier_for
    tier = tier_for(config.policy.sandbox)
    weaker = "" if tier.name == "full" else f", {tier.label()}"  # never read as a result in the full sandbox
    print(f"demo finished in {time.monotonic() - started:.0f}s: {'VERIFIED DONE' + weaker if code == 0 else 'not done'}"
          f"\n  workspace: {workspace}\n  history:   {shlex.join(['git', '-C', str(workspace), 'log', '--oneline'])}"
          f"\n  events:    nightshift log {run.run_id}")
    if backend == "tmux":
        subprocess.run(["tmux", "-L", f"ns-{run.run_id}", "kill-server"], capture_output=True)
    return code


def boundary_line(workspace: Path, config) -> str:
    """The demo's second line: whether the run it shows has nightshift's boundary, and why not where it has none
    (so the first run a user sees is not mistaken for the one a cluster without bubblewrap gives)."""
    from nightshift.supervisor.sandbox.boundary import boundary_for

    boundary = boundary_for(workspace, config)
    problem, tier = boundary.problem, boundary.tier
    if problem is None:
        return "boundary: on (the agent's processes run in nightshift's namespace, bubblewrap)"
    if tier.confined:  # no namespace, but Landlock and/or seccomp: its name, then the cause and its fix
        return (f"boundary: {tier.label()} for this demo, weaker than full: {problem}; `nightshift doctor` says "
                "what it leaves open")
    return (f"boundary: OFF for this demo: {problem}; the agent's processes run without nightshift's namespace "
            f"(`nightshift doctor` says what is missing)")


def _require_pytest() -> None:
    """The demo's verdict runs its tests with pytest in this interpreter: without it every stop would fail and
    the run would end paused after its budget, so it is refused up front."""
    from nightshift.supervisor.errors import UserError
    proc = subprocess.run([sys.executable, "-c", "import pytest, numpy"], capture_output=True, text=True)
    if proc.returncode != 0:
        missing = (proc.stderr.strip().splitlines() or ["import failed"])[-1]
        raise UserError(f"nightshift demo needs pytest and numpy in {sys.executable} ({missing}); "
                        f"`{shlex.join([sys.executable, '-m', 'pip', 'install', 'pytest', 'numpy'])}`, then "
                        "`nightshift demo` again")


def _follow(run, alive) -> int:
    """Print the story from the event log until the run finishes or its supervisor is gone."""
    from nightshift.supervisor.run.events import read_events
    from nightshift.supervisor.run.story import describe

    offset, outcome, grace = 0, None, 50
    while outcome is None and grace > 0:
        grace = grace if alive() else grace - 1  # a few more reads after the supervisor ends
        result = read_events(run.events, offset)
        offset = result.offset
        for event in result.events:
            line = describe(event)
            if line:
                print(f"  {line}", flush=True)
            if event["type"] == "run.finished":
                outcome = event["data"].get("outcome")
            elif event["type"] == "run.paused":  # a demo that needs a human will not finish by itself
                outcome = "paused"
        time.sleep(0.2)
    return 0 if outcome == "done" else 1
