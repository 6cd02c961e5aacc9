"""Fixtures for fleets: scripted command-agent lanes (the lane is known by its worktree's folder name, lane-<k>)
against a real oracle with bubblewrap, real git worktrees and real tmux; cleanup of every lane's supervisor and
tmux server, the fleet's first (so it starts no lane again while they go).

The lane agent reads ``agent_script.json``: for ``lane-<k>:s<shift>t<turn>``, else ``lane-<k>:default``, else
``default``, a list of actions as in tests/fixtures_core.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.fixtures_core import AGENT, kill_supervisor, workspace  # noqa: F401

LANE_AGENT = AGENT.replace(
    'key = f"s{os.environ[\'NIGHTSHIFT_SHIFT\']}t{os.environ[\'NIGHTSHIFT_TURN\']}"',
    'turn = f"s{os.environ[\'NIGHTSHIFT_SHIFT\']}t{os.environ[\'NIGHTSHIFT_TURN\']}"\n'
    'lane = Path.cwd().name\nkey = f"{lane}:{turn}"').replace(
    'for action in script.get(key, script.get("default", [])):',
    'for action in script.get(f"{lane}:{turn}", script.get(f"{lane}:default", script.get("default", []))):')
assert LANE_AGENT != AGENT

XS = range(1, 41)
REFERENCE = "# 1:x 2:y\n" + "".join(f"{x} {1.0 / (x + 0.123456789):.12f}\n" for x in XS)


def solver(rel_error: float) -> str:
    """An honest solver whose answers are off by ``rel_error`` (printed to 10 digits: never a copy)."""
    return ("import os\nos.makedirs('out', exist_ok=True)\n"
            f"text = '# 1:x 2:y\\n' + ''.join(f'{{x}} {{(1.0 / (x + 0.123456789)) * "
            f"(1 + {rel_error!r}):.10f}}\\n' for x in range(1, 41))\n"
            "open('out/result.dat', 'w').write(text)\nopen('out/heldout.dat', 'w').write(text)\n")


# The copying lane: the agent copies the visible reference (it may read it) and its solver hands that back.
COPIED = "import os, shutil\nos.makedirs('out', exist_ok=True)\nshutil.copy('answers.txt', 'out/result.dat')\n"
COPY = [["shell", "cp reference/result.dat answers.txt"], ["write", "solver.py", COPIED]]

ORACLE = (f'\n[oracle]\ncommand = "{sys.executable} solver.py"\n[[oracle.compare]]\nname = "result"\n'
          'candidate = "out/result.dat"\nreference = "reference/result.dat"\nrtol = 1e-6\n')

PAGE = ".nightshift/failed-approaches.md"


def wait_page(*needles: str) -> list:
    """An action: wait until the fleet's page of failed approaches names each of ``needles``."""
    cond = " && ".join(f"grep -q '{n}' {PAGE}" for n in needles)
    return ["shell", f"until [ -f {PAGE} ] && {cond}; do sleep 0.3; done"]


class Fleet:
    def __init__(self, ws):
        self.ws = ws

    def configure(self, script: dict, fleet: str, heldout_rtol: float | None = None, **kw):
        """``heldout_rtol``: also a held-out comparison (the same values, outside the workspace, this tolerance)."""
        (self.ws.path / "agent.py").write_text(LANE_AGENT)
        (self.ws.path / "reference").mkdir(exist_ok=True)
        (self.ws.path / "reference" / "result.dat").write_text(REFERENCE)
        oracle = ORACLE
        if heldout_rtol is not None:
            held = self.ws.path.parent / "held" / f"heldout-{uuid.uuid4().hex}.dat"
            held.parent.mkdir(exist_ok=True)
            held.write_text(REFERENCE)
            oracle += (f'[[oracle.compare]]\nname = "held"\ncandidate = "out/heldout.dat"\nreference = "{held}"\n'
                       f'heldout = true\nrtol = {heldout_rtol!r}\n')
        self.ws.configure(script, extra=oracle + "\n[fleet]\n" + fleet, **kw)
        return self

    def run_dir(self) -> Path:
        runs = sorted((self.ws.path / ".nightshift" / "runs").glob("*"))
        return runs[-1]

    def events(self, run_dir: Path | None = None) -> list[dict]:
        from nightshift.supervisor.run.events import read_events
        return read_events((run_dir or self.run_dir()) / "events.jsonl").events

    def of(self, kind: str, run_dir: Path | None = None) -> list[dict]:
        return [e["data"] for e in self.events(run_dir) if e["type"] == kind]

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.ws.path, capture_output=True, text=True).stdout


def lane_run_dirs(ws: Path) -> list[Path]:
    return sorted(ws.glob(".nightshift/lanes/*/lane-*/.nightshift/runs/*"))


@pytest.fixture
def fleet(workspace):  # noqa: F811
    yield Fleet(workspace)
    for run_dir in (workspace.path / ".nightshift" / "runs").glob("*"):
        kill_supervisor(run_dir)  # the fleet first: it would start a lane again
    for run_dir in lane_run_dirs(workspace.path):
        kill_supervisor(run_dir)
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)


def lane_events(run_dir: Path) -> list[dict]:
    from nightshift.supervisor.run.events import read_events
    return read_events(run_dir / "events.jsonl").events


def record_job(run, job_id: str, core_hours: float, gpu_hours: float = 0.0) -> None:
    """A Slurm job of the lane that ended, with what it spent, as hpc/backend.py records it (once per job)."""
    from nightshift.supervisor.run.events import EventLog
    from nightshift.supervisor.run.state import load_state

    seq = load_state(run.root)[0]["seq"]
    log = EventLog(run.events, last_seq=seq)
    try:
        log.append("slurm.job_changed", 1, job_id=job_id, state="COMPLETED", cpus=4, gpus=1 if gpu_hours else 0,
                   core_hours=core_hours, gpu_hours=gpu_hours, accounting="sacct")
    finally:
        log.close()


def planned_fleet(fleet: Fleet, limit: str):
    """A two-lane fleet under this [limits] line, planned, its lanes made (worktrees and runs), none started: its
    FleetSupervisor, whose ledger the caller closes."""
    from nightshift.supervisor.fleet.lanes import make_lane
    from nightshift.supervisor.fleet.launch import create_fleet
    from nightshift.supervisor.fleet.loop import FleetSupervisor
    from nightshift.supervisor.shift.launcher import resolve_config

    fleet.configure({"default": [["sleep", 1]]}, "lanes = 2\n")
    toml = fleet.ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[limits]\n", f"[limits]\n{limit}\n"))
    fleet.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "an allocation budget")
    config = resolve_config(fleet.ws.path)
    run = create_fleet(fleet.ws.path, config)
    sup = FleetSupervisor(run, config, say=lambda _: None)
    sup.ledger.open()
    sup.plan()
    for key, lane in sup.fleet["lanes"].items():
        make_lane(fleet.ws.path, config, lane, [])
        sup.emit("lane.created", lane=int(key))
    return sup


def show(fleet: Fleet) -> str:
    """What went on, for an assertion's message."""
    lines = [json.dumps({"t": e["type"], **e["data"]})[:300] for e in fleet.events()]
    return "\n".join(lines)
