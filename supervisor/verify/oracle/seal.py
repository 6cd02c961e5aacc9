"""The oracle command runs where no reference can be read: its candidates must come from the solver, never from
the answers. With bubblewrap the command runs in a mount namespace where every reference file (visible or held
out) and the private store of held-out copies are absent; everything else (the workspace, its inputs, the output
folder) is as it is. Without bubblewrap the visible references are moved out of the workspace for the length of
the command (the run's store keeps their copies and hashes) and put back after it, and after a crash at the next
start; held-out references outside the workspace cannot be hidden from a process of the same user then, and
every verdict says so.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MARKER = ".hidden-for-oracle"  # in the run's reference store while the visible references are moved aside


@dataclass
class Seal:
    how: str  # "sandbox" | "moved" | "none"
    argv_prefix: list[str] = field(default_factory=list)  # bwrap ... -- (sandbox)
    notes: list[str] = field(default_factory=list)  # how far the references are out of reach, for the verdict


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make a mount namespace here, or None when it can (probed once per process)."""
    if not shutil.which("bwrap"):
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/tmp", "--unshare-net", "true"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot create namespaces here ({why}; many clusters disable user namespaces)"
    return None


def hidden_paths(visible: list[Path], heldout: list[Path], heldout_store: Path | None) -> list[Path]:
    paths = [p for p in visible + heldout if p.exists()]
    if heldout_store is not None and heldout_store.exists():
        paths.append(heldout_store)
    return paths


def bwrap_argv(hide: list[Path], written: set[Path] = frozenset(), empty: Path | None = None) -> list[str]:
    """bwrap over the whole filesystem, each hidden file or folder made absent: a folder's place is taken by an
    empty tmpfs, and a file by an empty tmpfs over its folder with every other entry of that folder bound back
    (bind sources are read from the unmasked filesystem). In a folder the solver writes to (``written``), or one
    above it (the workspace itself, when a reference sits at its top), a file is covered by an empty one instead:
    a tmpfs there would swallow what the solver writes, even folders it creates."""
    argv = ["bwrap", "--dev-bind", "/", "/", "--die-with-parent"]
    folders = sorted({p for p in hide if p.is_dir()})
    by_parent: dict[Path, set[str]] = {}
    for path in hide:
        if not path.is_file() or any(path.is_relative_to(f) for f in folders):
            continue
        if empty is not None and any(w == path.parent or w.is_relative_to(path.parent) for w in written):
            argv += ["--ro-bind", str(empty), str(path)]
        else:
            by_parent.setdefault(path.parent, set()).add(path.name)
    for folder in folders:
        argv += ["--tmpfs", str(folder)]
    for parent, names in sorted(by_parent.items()):
        argv += ["--tmpfs", str(parent)]
        for entry in sorted(parent.iterdir()):
            if entry.name not in names:
                argv += ["--dev-bind", str(entry), str(entry)]
    return argv + ["--"]


def seal_for(policy_sandbox: str, visible: list[Path], heldout: list[Path], heldout_store: Path | None,
             workspace: Path, written: set[Path] = frozenset(), empty: Path | None = None) -> Seal:
    hide = hidden_paths(visible, heldout, heldout_store)
    if not hide:
        return Seal("none")
    problem = bwrap_problem() if policy_sandbox != "off" else "[policy] sandbox = \"off\""
    if problem is None:
        if any(workspace.resolve().is_relative_to(p) or p == workspace.resolve() for p in hide):
            problem = "a reference folder holds the whole workspace"
        else:
            notes = ["references were absent while the oracle command ran (bubblewrap)"]
            shared = sorted(str(p.relative_to(workspace)) if p.is_relative_to(workspace) else str(p)
                            for p in {r.parent for r in visible} & set(written))
            if shared:
                notes.append(f"{', '.join(shared)} holds references and candidates: its references read as empty "
                             "files while the oracle command runs; keep references in a folder of their own")
            return Seal("sandbox", bwrap_argv(hide, set(written), empty), notes)
    notes = [f"visible references were moved out of the workspace while the oracle command ran ({problem})"]
    if heldout:
        notes.append(f"held-out references were NOT hidden from the oracle command on this machine ({problem}): a "
                     "solver run by the same user could read them; a store readable only by another account, or "
                     "bubblewrap, would protect them")
    return Seal("moved", [], notes)


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
    from supervisor.verify.oracle.integrity import restore_references

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
