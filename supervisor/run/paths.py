"""Every path of a run, derived in one place (the run directory is the contract, see DESIGN.md).

A run lives in ``<workspace>/.nightshift/runs/<run-id>/``; the user registry of runs lives under
``$XDG_STATE_HOME/nightshift/``. Nothing else in nightshift builds these paths by hand.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

STATE_DIR_NAME = ".nightshift"


def new_run_id() -> str:
    """A sortable, collision-resistant id: UTC date-time plus 4 random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def user_state_dir() -> Path:
    """The per-user state folder (shared across login nodes through the home directory)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "nightshift"


def registry_path() -> Path:
    """The user registry: one JSON line per run, so `nightshift ls` finds runs from any login node."""
    return user_state_dir() / "runs.jsonl"


def heldout_store(store: Path) -> Path:
    """The private folder, outside the workspace, of a run's held-out references (``store``: the run's reference
    store) and of the full figures the oracle measured against them."""
    resolved = Path(store).resolve()
    key = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    return user_state_dir() / "heldout" / f"{resolved.parent.name}-{key}"


def workspace_state_dir(workspace: Path) -> Path:
    return Path(workspace) / STATE_DIR_NAME


def make_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) readable only by the user: other users share the login node."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _child(name: str) -> cached_property:
    """The run directory's file or folder ``name``, made once per RunPaths: the wait loop asks for several at every
    wake-up (four a second when it polls), and building a Path each time was a third of a wake-up's own work."""
    return cached_property(lambda self: self.root / name)


@dataclass(frozen=True)
class RunPaths:
    """The files of one run directory."""

    root: Path

    @classmethod
    def for_run(cls, workspace: Path, run_id: str) -> "RunPaths":
        return cls(workspace_state_dir(Path(workspace).resolve()) / "runs" / run_id)

    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def workspace(self) -> Path:
        return self.root.parent.parent.parent

    config = _child("config.toml")
    events = _child("events.jsonl")
    snapshot = _child("snapshot.json")
    supervisor = _child("supervisor.json")
    supervisor_log = _child("supervisor.log")
    lock = _child("supervisor.lock")
    last_word = _child("last-word.json")  # space kept for a crash on a full disk
    prerun = _child("prerun.json")  # the user's dirty paths when the run began
    inbox = _child("inbox")
    shifts = _child("shifts")
    stops = _child("stops")
    references = _child("references")
    heldout = _child("heldout")
    agent_home = _child("agent-home")
    refusals = _child("refusals")  # the tool-call hook's refusals, written by the hooks
    waits = _child("waits")  # the hooks' records of a prompt waiting for a person

    def shift_dir(self, shift: int) -> Path:
        return self.shifts / str(shift)

    def turn_file(self, shift: int, turn: int, name: str) -> Path:
        """Per-turn files of a shift: ``shifts/<n>/t<turn>.<name>`` (prompt.md, log, exit, ...)."""
        return self.shift_dir(shift) / f"t{turn}.{name}"

    def fleet_check(self, lane: int, sha: str) -> Path:
        """Where a fleet checks a lane's commit; its ``verdict/`` keeps the check's shift folder (t1.verdict.json,
        t1.oracle/oracle.json) after the checkout goes."""
        return self.root / "checks" / f"lane-{lane}-{sha[:12]}"

    def create(self) -> "RunPaths":
        for d in (self.root, self.inbox, self.shifts, self.stops):
            make_private_dir(d)
        return self
