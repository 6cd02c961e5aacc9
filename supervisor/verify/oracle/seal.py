"""The oracle command runs where no reference can be read: its candidates must come from the solver, never from
the answers. Where nightshift's namespace can be made (supervisor/sandbox/, the one room that makes them) the
command runs in it with every reference absent. Without one, this module's fallback: the visible references are
moved out of the workspace for the length of the command (the run's store keeps their copies and hashes) and put
back after it, and after a crash at the next start; held-out references outside the workspace cannot be hidden
from a process of the same user then, and every verdict says so (``Seal.heldout_protected``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

MARKER = ".hidden-for-oracle"  # in the run's reference store while the visible references are moved aside


@dataclass
class Seal:
    """How far the references were out of the oracle command's reach: carried as data (not in note wording)."""
    how: str  # "namespace" | "moved" | "none"
    heldout_protected: bool = True  # False: held-out references were readable to the command
    notes: list[str] = field(default_factory=list)  # how it held, for the verdict's report
    warnings: list[str] = field(default_factory=list)  # doors left open: in the report and told to the agent
    leftovers: list[str] = field(default_factory=list)  # processes the command left running (ended with it)


def move_aside(workspace: Path, store: Path, visible: list[Path]) -> None:
    """Take the visible references out of the workspace for the command: renamed into the run's store (one
    rename each, whatever their size); the marker says where each went, for put_back after a crash."""
    aside = store / "aside"
    aside.mkdir(mode=0o700, exist_ok=True)
    moves = []
    for n, path in enumerate(visible):
        if path.is_file() and path.resolve().is_relative_to(workspace.resolve()):
            moves.append((str(path), str(aside / f"{n:04d}-{path.name}")))
    (store / MARKER).write_text(json.dumps(moves))
    for src, dest in moves:
        os.replace(src, dest)


def put_back(workspace: Path, store: Path) -> None:
    """After the command, or at the next start after a crash during it: every reference back where it was (a
    rename back; what is missing comes from the store's copies, checked against their hashes)."""
    from nightshift.supervisor.verify.oracle.integrity import restore_references

    marker = store / MARKER
    if not marker.exists():
        return
    try:
        moves = json.loads(marker.read_text())
    except ValueError:
        moves = []
    for src, dest in moves:
        if os.path.exists(dest) and not os.path.exists(src):
            os.replace(dest, src)
    if any(not os.path.exists(src) for src, _ in moves) or not moves:
        restore_references(workspace, store)
    marker.unlink()


def missing_reference_hint(stderr_tail: list[str], visible: list[Path], workspace: Path) -> str | None:
    """An oracle command that failed on a hidden reference: say why, and how to move real inputs out."""
    text = " ".join(stderr_tail)
    for path in visible:
        rel = str(path.relative_to(workspace)) if path.is_relative_to(workspace) else str(path)
        if path.name in text or rel in text:
            return (f"the oracle command tried to read {rel}, a reference: references are hidden while it runs, "
                    "so candidates come from the solver; if the solver needs that file as an input, keep the input "
                    "out of the reference folder (e.g. data/) and compare only the outputs")
    return None
