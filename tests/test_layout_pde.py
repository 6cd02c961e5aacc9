"""A phase-field code's output as a PDE library's storage writes it (py-pde's FileStorage: ``data`` (11, 24, 24)
beside ``times`` (11), JSON attributes with the grid; and its preallocating mode, 16 rows with ``data_length =
11``), from `nightshift init` defaults to a run of a scripted command agent.

init compares the field (not ``columns = [0]``), locates it by t (the times beside it) and x, y (the grid
attribute's cell centres), and check reads what init wrote. An honest solver ends VERIFIED DONE, whatever it writes
in the rows beyond the stated length; a solver with a misplaced source fails there, located as t, x, y; one that
states a shorter length to hide rows, or writes other output times, fails too.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.fixtures_core import AGENT, nightshift, require_tool
from tests.fixtures_layouts import write_pde_storage
from tests.fixtures_namespace import run_until_it_rests

GOAL = "the phase field agrees with the reference run to 1e-6 relative"
TIMES = np.arange(11, dtype=float)
CENTRES = np.arange(24) + 0.5  # the grid attribute's bounds [0, 24] in 24 cells
# The solver as the agent writes it: the field computed (sin(a + b) expanded: the same numbers to ~1e-16, not the
# reference's bits), written as py-pde's FileStorage writes it; BUG adds a misplaced source, LENGTH states a length.
SOLVER = '''import json, sys
import numpy as np, h5py
BUG, ALLOCATE, LENGTH, SHIFT = {bug}, {allocate}, {length}, {shift}
t = np.arange(11, dtype=float) + SHIFT
x = np.arange(24) + 0.5
T, X, Y = np.meshgrid(t - SHIFT, x, x, indexing="ij")
u = 2 + np.exp(-0.1 * T) * (np.sin(0.3 * X) * np.cos(0.2 * Y) + np.cos(0.3 * X) * np.sin(0.2 * Y))
if BUG:
    u[4] += 1e-3 * np.exp(-((X[4] - 10.5) ** 2 + (Y[4] - 13.5) ** 2))
grid = {{"class": "CartesianGrid", "bounds": [[0, 24], [0, 24]], "shape": [24, 24], "periodic": [True, True]}}
for name, rows in (("trajectory", 11), ("prealloc", ALLOCATE)):
    with h5py.File(f"out/{{name}}.h5", "w") as f:
        data = f.create_dataset("data", shape=(rows, 24, 24), dtype="f8")
        data[:11] = u
        data[11:] = 7.0  # what a preallocating writer leaves beyond the data: not data
        times = f.create_dataset("times", shape=(rows,), dtype="f8")
        times[:11] = t
        f.attrs["field_attributes"] = json.dumps({{"grid": json.dumps(grid)}})
        if rows > 11:
            f.attrs["data_length"] = json.dumps(LENGTH)
'''


def reference_field() -> np.ndarray:
    t, x, y = np.meshgrid(TIMES, CENTRES, CENTRES, indexing="ij")
    return 2 + np.exp(-0.1 * t) * np.sin(0.3 * x + 0.2 * y)


@pytest.fixture
def pde_ws(tmp_path):
    """A git workspace with both storage files as references, `nightshift init` from defaults (a command agent):
    only what a user must fill in is set (the agent's and the oracle's commands)."""
    require_tool("git")
    require_tool("tmux")
    root = tmp_path / "ws"
    values = reference_field()
    write_pde_storage(root / "reference" / "trajectory.h5", values, TIMES)
    write_pde_storage(root / "reference" / "prealloc.h5", values, TIMES, allocated=16)
    done = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--agent", "command", "--yes")
    assert done.returncode == 0, done.stderr
    (root / "agent.py").write_text(AGENT)
    toml = root / "nightshift.toml"
    text = toml.read_text().replace('kind = "command"', f'kind = "command"\ncommand = "{sys.executable} agent.py"', 1)
    toml.write_text(text.replace('\ncommand = ""', f'\ncommand = "mkdir -p out && {sys.executable} solver.py"', 1))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=root, check=True)
    yield root, done.stdout
    for run_dir in (root / ".nightshift" / "runs").glob("*"):
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)


def test_init_compares_the_field_located_by_its_times_and_grid_and_check_reads_it(pde_ws):
    root, said = pde_ws
    assert "columns 0" not in said and "columns = [0]" not in (root / "nightshift.toml").read_text()
    assert "compare  reference/trajectory.h5: 1 field of 11 x 24 x 24 (/data)" in said, said
    assert "compare  reference/prealloc.h5: 1 field of 11 x 24 x 24 (/data)" in said, said  # 11 rows, not 16
    assert said.count("located by t from /times; x, y from its grid attribute") == 2, said
    assert "/data: the first 11 of its 16 rows are data (data_length = 11)" in said, said
    checked = nightshift("check", str(root), timeout=180)
    assert "cannot be read" not in checked.stdout, checked.stdout
    assert re.search(r"^ok +calibration +prealloc:data, trajectory:data", checked.stdout, re.M), checked.stdout


def run_agent(root, solver: str):
    """One shift of the scripted agent: it writes ``solver``, checks its plan, notes it, claims done."""
    from nightshift.supervisor.shift.launcher import create_run, resolve_config
    from tests.fixtures_core import Workspace

    tick = ("import re, pathlib; p = pathlib.Path('CLAUDE.md'); head, plan = p.read_text().split('## Plan', 1); "
            "p.write_text(head + '## Plan' + plan.replace('- [ ]', '- [x]'))")
    script = {"default": [["write", "solver.py", solver], ["shell", f"{sys.executable} -c \"{tick}\""],
                          ["append", "CHANGELOG.md", "\n- computed the phase field; compared with the reference\n"],
                          ["claim", "done", "the phase field matches"]]}
    (root / "agent_script.json").write_text(json.dumps(script))
    toml = root / "nightshift.toml"
    toml.write_text(re.sub(r"max_shifts = \d+", "max_shifts = 1", toml.read_text()))  # a wrong one: one shift only
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "script"], cwd=root,
                   check=True)
    run = create_run(root, resolve_config(root))
    workspace = Workspace(root)
    run_until_it_rests(workspace, run, timeout=240)
    return run, workspace


def solver(bug: bool = False, allocate: int = 16, length: int = 11, shift: float = 0.0) -> str:
    return SOLVER.format(bug=bug, allocate=allocate, length=length, shift=shift)


def test_an_honest_solver_ends_verified_done_whatever_lies_beyond_the_stated_length(pde_ws):
    root, _ = pde_ws
    run, workspace = run_agent(root, solver(allocate=14))  # preallocated 14 rows: 3 of junk, not the reference's 5
    finished = [e["data"] for e in workspace.events(run) if e["type"] == "run.finished"]
    assert finished and finished[0]["outcome"] == "done", workspace.types(run)
    report = nightshift("report", str(run.root), "-o", str(root.parent / "report.html"))
    assert "VERIFIED DONE" in report.stdout, report.stdout + report.stderr


@pytest.mark.parametrize("kind, words", [
    ("misplaced source", "t=4, x=10.5, y=13.5 (index (4, 10, 13))"),
    ("a shorter stated length hides the last rows", "(the candidate states data_length = 9 of its 16 rows; the "
                                                    "reference states data_length = 11 of its 16 rows)"),
    ("other output times", "its coordinate 't' differs from the reference's at index 0"),
], ids=["bug", "hides-rows", "other-times"])
def test_a_wrong_solver_never_ends_done_and_is_told_where(pde_ws, kind, words):
    root, _ = pde_ws
    code = {"misplaced source": solver(bug=True), "a shorter stated length hides the last rows": solver(length=9),
            "other output times": solver(shift=0.5)}[kind]
    run, workspace = run_agent(root, code)
    assert not any(e["type"] == "run.finished" and e["data"]["outcome"] == "done" for e in workspace.events(run))
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    pushback = run.turn_file(1, 2, "prompt.md").read_text()
    assert words in pushback, pushback
    assert "interpolate" not in pushback  # no hint that cannot help
