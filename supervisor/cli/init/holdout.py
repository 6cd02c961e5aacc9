"""`nightshift init --reference-dir DIR --holdout NAME|N`: which data sets become the held-out exam, and moving
them out of the workspace into nightshift's private store (which every process of the agent's code cannot see).

A held-out data set is a whole file (a file holding several data sets, like an .npz, goes whole: its other
parts would be read from the same file). ``N`` picks N files so that every kind of file (by suffix) keeps at
least one visible data set, taking them round-robin across kinds, the last of each kind first. The solver still
writes their candidates: only the references move.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from nightshift.supervisor.gitguard import run_git
from nightshift.supervisor.cli.init.survey import Survey
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import make_private_dir, user_state_dir


class HoldoutError(UserError):
    pass


def _file(comp) -> str:
    return comp.reference.split(":", 1)[0]


def _kind(path: str) -> str:
    return Path(path).suffix.lower() or "(no suffix)"


def choose(survey: Survey, spec: str, reference_dir: str) -> list[str]:
    """The reference files (relative to the workspace) to hold out for ``spec`` (names, comma-separated, or N)."""
    files = list(dict.fromkeys(_file(c) for c in survey.comparisons))
    spec = spec.strip()
    if spec.isdigit():
        return _pick(files, int(spec), reference_dir)
    by_name = {c.name: _file(c) for c in survey.comparisons}
    chosen = []
    for name in [n.strip() for n in spec.split(",") if n.strip()]:
        if name not in by_name:
            raise HoldoutError(f"--holdout {name}: {reference_dir}/ has no data set of that name (it has: "
                               f"{', '.join(sorted(by_name))[:300]}); name one of them, or give a number")
        chosen.append(by_name[name])
    chosen = list(dict.fromkeys(chosen))
    if not chosen:
        raise HoldoutError("--holdout needs a data set's name (or several, comma-separated) or a number")
    if len(chosen) == len(files):
        raise HoldoutError(f"--holdout {spec}: that holds out every data set of {reference_dir}/, so the agent sees "
                           "none to learn the format from; leave at least one visible")
    return chosen


def _pick(files: list[str], n: int, reference_dir: str) -> list[str]:
    kinds: dict[str, list[str]] = {}
    for path in files:
        kinds.setdefault(_kind(path), []).append(path)
    spare = {k: v[1:] for k, v in kinds.items()}  # each kind keeps its first file visible
    most = sum(len(v) for v in spare.values())
    if not most:
        raise HoldoutError(f"--holdout {n}: {reference_dir}/ has no data file to spare (one of each kind stays "
                           "visible to the agent); add data sets, or hold out nothing")
    if n < 1 or n > most:
        raise HoldoutError(f"--holdout {n}: {reference_dir}/ has {len(files)} data file(s) of {len(kinds)} kind(s); "
                           f"at most {most} can be held out with every kind still visible to the agent; give 1 to "
                           f"{most}")
    chosen: list[str] = []
    while len(chosen) < n:
        for kind in sorted(spare):
            if spare[kind] and len(chosen) < n:
                chosen.append(spare[kind].pop())
    return chosen


def private_home(workspace: Path) -> Path:
    """Where init keeps a workspace's held-out references: the user's state folder, never inside the workspace."""
    ws = Path(workspace).resolve()
    return user_state_dir() / "heldout" / f"init-{ws.name}-{hashlib.sha256(str(ws).encode()).hexdigest()[:12]}"


def plan(workspace: Path, survey: Survey, files: list[str]) -> dict[str, Path]:
    """Mark the comparisons of ``files`` held out, pointing at their new place; returns {file: destination}."""
    home = private_home(workspace)
    moves = {rel: home / rel for rel in files}
    for comp in survey.comparisons:
        rel = _file(comp)
        if rel in moves:
            part = comp.reference[len(rel):]
            comp.reference, comp.heldout = str(moves[rel]) + part, True
    return moves


def move(workspace: Path, moves: dict[str, Path]) -> list[str]:
    """Move the files; returns notes for the user (a file git already has stays readable in its history)."""
    notes = []
    for rel, dest in moves.items():
        make_private_dir(dest.parent)
        if dest.exists():
            raise HoldoutError(f"--holdout: {dest} already exists (an earlier init held it out); remove it or "
                               "choose another data set")
        shutil.move(str(Path(workspace) / rel), dest)
        os.chmod(dest, 0o600)
        tracked = run_git(Path(workspace), "log", "--all", "--oneline", "-1", "--", rel)
        if tracked.returncode == 0 and tracked.stdout.strip():
            notes.append(f"{rel} is in this repository's git history, where the agent can still read it "
                         "(`git log --all -- PATH`); hold out a data set git never had, or rewrite that history")
    return notes
