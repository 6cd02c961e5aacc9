"""The repository's control files stay as the user left them (issue 27): .git/config, hooks/, info/, a worktree's
config and `.git` pointer, a submodule's config and hooks (gitguard.control_paths). They are what would make git
run a program the agent wrote, in nightshift's own git and in the user's `git status` the morning after.

At a run's start they are kept in the run's private store (``snapshot``); at every stop, at a supervisor's start
and at the run's end each is compared with what was kept (``restore``): a change, an addition, a deletion or a
replacement by a symlink is put back, and named in the verdict like a protected file. Nothing here follows a link:
a symlink is recorded and restored as a symlink, and a file is read only when it is a regular file.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

from nightshift.supervisor import gitguard
from nightshift.supervisor.run.private import write_private_bytes
from nightshift.supervisor.verify.checks import Check

MANIFEST = "manifest.json"
MAX_FILES = 2000  # a hooks folder is a few files; a planted million is a finding, not a copy


def _entries(path: Path, out: dict[str, dict]) -> None:
    """{path: what it is} for ``path`` and, for a folder, everything under it, without following links."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        out[str(path)] = {"kind": "absent"}
        return
    if len(out) >= MAX_FILES:
        return
    if stat.S_ISLNK(st.st_mode):
        out[str(path)] = {"kind": "link", "target": os.readlink(path)}
    elif stat.S_ISDIR(st.st_mode):
        out[str(path)] = {"kind": "dir", "mode": stat.S_IMODE(st.st_mode)}
        for entry in sorted(os.listdir(path)):
            _entries(path / entry, out)
    elif stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
        out[str(path)] = {"kind": "file", "mode": stat.S_IMODE(st.st_mode),
                          "sha256": hashlib.sha256(data).hexdigest(), "data": data}
    else:
        out[str(path)] = {"kind": "special"}


def _state(workspace: Path, roots: list[str] | None = None) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in (roots if roots is not None else gitguard.control_paths(workspace)):
        _entries(Path(path), out)
    return out


def snapshot(workspace: Path, store: Path) -> None:
    """Keep the control files as they are now (once per run: a kept snapshot is never replaced)."""
    if (store / MANIFEST).exists():
        return
    store.mkdir(mode=0o700, parents=True, exist_ok=True)
    roots = [str(p) for p in gitguard.control_paths(workspace)]
    kept = {}
    for path, entry in _state(workspace, roots).items():
        if entry["kind"] == "file":
            write_private_bytes(store / entry["sha256"], entry.pop("data"))
        kept[path] = entry
    write_private_bytes(store / MANIFEST, json.dumps({"roots": roots, "entries": kept}).encode())


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _put_back(path: Path, entry: dict, store: Path) -> None:
    if entry["kind"] == "dir" and path.is_dir() and not path.is_symlink():
        os.chmod(path, entry["mode"])  # the folder is there: its entries are put back one by one
        return
    _remove(path)
    if entry["kind"] == "dir":
        path.mkdir(mode=entry["mode"], parents=True, exist_ok=True)
    elif entry["kind"] == "link":
        os.symlink(entry["target"], path)
    elif entry["kind"] == "file":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, entry["mode"])
        with os.fdopen(fd, "wb") as fh:
            fh.write((store / entry["sha256"]).read_bytes())
        os.chmod(path, entry["mode"])


def _what(was: dict, now: dict) -> str:
    if now["kind"] == "absent":
        return "deleted"
    if was["kind"] == "absent":
        return "added"
    if now["kind"] == "link":
        return f"replaced by a symlink (to {now['target']})"
    if now["kind"] != was["kind"]:
        return f"replaced by a {now['kind']}"
    return "changed"


def _under(path: str, folders: list[str]) -> bool:
    return any(path.startswith(f + "/") for f in folders)


def restore(workspace: Path, store: Path) -> list[str]:
    """Put back every control file that differs from the snapshot; a line per path put back (empty: unchanged)."""
    try:
        kept = json.loads((store / MANIFEST).read_text())
    except (OSError, ValueError):
        return []
    entries, ws = kept["entries"], Path(workspace)
    now = _state(ws, kept["roots"])
    changed: list[tuple[str, str]] = []
    for path in sorted(set(now) - set(entries), key=lambda p: (p.count("/"), p)):  # planted: removed
        if not _under(path, [p for p, _ in changed]):
            _remove(Path(path))
            changed.append((path, "added"))
    for path in sorted(entries, key=lambda p: (p.count("/"), p)):  # kept: put back, parents first
        was, found = entries[path], now.get(path, {"kind": "absent"})
        if was["kind"] == found["kind"] and all(was.get(k) == found.get(k) for k in ("sha256", "target", "mode")):
            continue
        if was["kind"] == "absent" and not os.path.lexists(path):
            continue  # went with its folder
        _put_back(Path(path), was, store)
        if not _under(path, [p for p, _ in changed]):
            changed.append((path, _what(was, found)))
    out = []
    for path, what in changed:
        shown = os.path.relpath(path, ws) if Path(path).is_relative_to(ws) else path
        done = "removed" if what == "added" else "restored"
        out.append(f"{shown} was {what} by the agent and has been {done}: git's control files are not the "
                   "agent's to change (git would run what they name)")
    return out


def store_of(run_root: Path) -> Path:
    return Path(run_root) / "git-controls"


def prepare(workspace: Path) -> None:
    """hooks/ and info/ exist (as `git init` makes them), so the namespace can hold them read-only: a folder
    that is not there could be made by the agent."""
    _, common, _ = gitguard.git_dirs(workspace)
    for name in ("hooks", "info"):
        if not os.path.lexists(common / name):
            (common / name).mkdir(mode=0o755)


def at_start(workspace: Path, store: Path) -> list[str]:
    """A supervisor starting: keep the control files if this run has no snapshot yet, else put them back."""
    if not (store / MANIFEST).exists():
        prepare(workspace)
        snapshot(workspace, store)
        return []
    return restore(workspace, store)


def check_git_controls(workspace: Path, store: Path, tried: list[dict] | None = None) -> Check:
    """Put back what changed; a failing check naming it, and naming the writes the namespace refused (the agent
    tried to plant something git would run: that is no honest step toward the goal)."""
    lines = restore(workspace, store)
    lines += [f"refused by the namespace: {r.get('input')}" for r in (tried or [])]
    if not lines:
        return Check("git", True, "git: control files unchanged")
    return Check("git", False, f"git: {len(lines)} control file(s) of the repository changed by the agent, "
                               "restored", lines)
