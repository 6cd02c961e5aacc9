"""The verdict's own tree: where the oracle command and the tests that decide a verdict run, made from the tree of
the commit the verdict names (candidate_index: what the stop's commit will hold) and written by nightshift only.

Why: a verdict is about that commit. In the workspace, the agent can leave state beside the tree (binaries newer
than the source after a `cp -p` of the old source, ignored build outputs, caches, a stale install in a venv) and
the answers in reach (the references committed to git: `git show HEAD:reference/...`, a stash, another branch).
Here there is only the commit's files (the references written by nightshift where the workspace has them, for the
tests: verdict_references.py; the oracle command's namespace hides them) and what nightshift's own earlier verdicts
of this run built there; the workspace itself, and every other verdict tree, is hidden while a command runs.

Incremental: the tree persists between the run's verdicts (a private folder of the user's state, out of every
agent process's reach: the namespace shows it read-only at most, and only to the agent's turn). A file whose blob
and mode are those of the last verdict, and whose inode and ctime are still the ones written then (no process can
set a ctime back), keeps its mtime, so make rebuilds only what changed; every other tracked file is written anew
(mtime now); a file the commit no longer holds is removed; build outputs stay. Git is there without its history:
a repository of one commit listing the candidate's paths and blob ids, without a blob (verdict_git.py).

Git runs through gitguard (nothing the workspace names is executed); the blobs are read with cat-file, so no
filter, hook or attribute of the repository runs.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from nightshift.supervisor.candidate_index import stage_candidate
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES
from nightshift.supervisor.gitguard import cat_file_batch, run_git, safe_env
from nightshift.supervisor.run.paths import STATE_DIR_NAME, make_private_dir, user_state_dir
from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.sandbox.mounts import HOST_TMP
from nightshift.supervisor.verify.verdict_git import git_kept, git_without_history, remember_git

MANIFEST = "manifest.json"  # path -> [mode, blob, inode, ctime_ns] of each file this module wrote


class TreeProblem(Exception):
    """The verdict's tree could not be made (a one-line reason)."""


@dataclass
class VerdictTree:
    path: Path  # the tree: the oracle command's and the tests' working folder
    tree: str  # the candidate's git tree id
    written: list[str] = field(default_factory=list)  # tracked files written anew (changed since the last verdict)
    removed: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # tracked references not written (no reference bytes here)
    notes: list[str] = field(default_factory=list)


def _blobs(workspace: Path, shas: list[str]):
    """The candidate's blobs, streamed (gitguard.cat_file_batch) with the guarded environment."""
    return cat_file_batch(["git", "cat-file", "--batch"], safe_env(workspace), shas, cwd=workspace)


def _safe(path: str) -> None:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise TreeProblem(f"the commit holds a path nightshift will not write: {path!r}")


def home_for(owner: Path, workspace: Path) -> Path:
    """Where the verdict tree of ``owner`` (a run's folder, or a workspace for `check`) lives: the user's state
    folder, outside the workspace (which the command does not see); the host's /tmp (private to every namespace)
    where that folder is inside the workspace."""
    key = hashlib.sha1(str(Path(owner).resolve()).encode()).hexdigest()[:12]
    base = user_state_dir()
    if base.resolve().is_relative_to(Path(workspace).resolve()):
        base = HOST_TMP / f"nightshift-{os.getuid()}"
    return base / "verdict-trees" / f"{Path(owner).name}-{key}"


def left_out(path: str, leave_out: set[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in leave_out)


def listing(workspace: Path, tree: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """{path: (mode, blob)} of a tree-ish of the workspace's repository, and notes (submodules left out)."""
    out = run_git(workspace, "ls-tree", "-r", "-z", "--full-tree", tree, text=False, check=True).stdout
    entries, notes = {}, []
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, raw = item.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        path = raw.decode("utf-8", "surrogateescape")
        if kind == "commit":
            notes.append(f"submodule {path} is not in the verdict's tree (its commit is not here)")
            continue
        _safe(path)  # a path that leaves the tree or names .git is refused
        entries[path] = (mode, sha)
    return entries, notes


def clear_place(root: Path, parts: list[str]) -> Path:
    """The file's folder made a real folder of the tree (a link or a file on the way, left by a command, removed),
    and whatever is at the file's own place removed; returns the file's path."""
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        folder.mkdir(exist_ok=True)
    target = folder / parts[-1]
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    return target


def identity(path: Path) -> list[int] | None:
    """A file's inode and ctime (what tells a copy of ours from one a command rewrote; no one can set a ctime)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_ctime_ns]


def _write(workspace: Path, root: Path, todo: list[str], entries: dict[str, tuple[str, str]]) -> None:
    if not todo:
        return
    with _blobs(workspace, [entries[p][1] for p in todo]) as blobs:
        for path in todo:
            mode, sha = entries[path]
            header = blobs.readline().split()
            if len(header) != 3 or header[0].decode() != sha:
                raise TreeProblem(f"git cat-file did not give blob {sha} of {path}")
            size = int(header[2])
            target = clear_place(root, path.split("/"))
            if mode == "120000":
                os.symlink(blobs.read(size).decode("utf-8", "surrogateescape"), target)
            else:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o755 if mode == "100755" else 0o644)
                with os.fdopen(fd, "wb") as fh:
                    left = size
                    while left:
                        chunk = blobs.read(min(left, 1 << 20))
                        if not chunk:
                            raise TreeProblem(f"git cat-file ended inside {path}")
                        fh.write(chunk)
                        left -= len(chunk)
            blobs.read(1)  # the newline after each object


def _remove(root: Path, path: str) -> None:
    target = root / path
    if not target.parent.resolve().is_relative_to(root.resolve()):
        return  # a folder on the way is a link a command planted: its target is not ours to touch
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target, ignore_errors=True)
    elif target.exists() or target.is_symlink():
        target.unlink()


def sync(workspace: Path, home: Path, leave_out: set[str], max_bytes: int = MAX_COMMIT_BYTES) -> VerdictTree:
    """Bring the verdict's tree in ``home`` to the candidate's tree, leaving out the workspace-relative paths of
    ``leave_out`` (the references). Raises TreeProblem with a one-line reason."""
    home = make_private_dir(Path(home))
    root = home / "tree"
    root.mkdir(exist_ok=True)
    try:
        env = stage_candidate(workspace, home / "index", max_bytes)
        tree = run_git(workspace, "write-tree", env=env, check=True).stdout.strip()
        entries, notes = listing(workspace, tree)
    except (subprocess.CalledProcessError, OSError, ValueError, TreeProblem) as exc:
        raise TreeProblem(f"the candidate's tree could not be read from git: {exc}") from None
    listed = dict(entries)  # the git there lists every path, the references too (no blob of any)
    left = sorted(p for p in entries if left_out(p, leave_out))
    for path in left:
        del entries[path]
    try:
        old = json.loads((home / MANIFEST).read_text())
    except (OSError, ValueError):
        old = {}
    found = VerdictTree(root, tree, left_out=left, notes=notes)
    for path in sorted(set(old) - set(entries)):
        _remove(root, path)
        found.removed.append(path)
    found.written = [p for p in sorted(entries) if old.get(p, [None, None])[:2] != list(entries[p])
                     or identity(root / p) != old[p][2:]]
    (home / MANIFEST).unlink(missing_ok=True)  # a crash while writing leaves no manifest: all is written next time
    made: list[str | None] = []  # the git there is made while the files are written (it touches only .git)
    maker = None if git_kept(home, root, tree) else \
        threading.Thread(target=lambda: made.append(git_without_history(workspace, root, listed)), daemon=True)
    if maker is not None:
        maker.start()
    try:
        _write(workspace, root, found.written, entries)
    finally:
        if maker is not None:
            maker.join()
    manifest = {p: [*entries[p], *(identity(root / p) or [0, 0])] for p in entries}
    found.notes += [p for p in made if p]
    remember_git(home, root, tree)
    (home / MANIFEST).write_text(json.dumps(manifest))
    return found


def references_of(boundary: Boundary) -> set[str]:
    """The workspace-relative paths the verdict's tree never holds: every visible reference (as configured and as
    resolved) and nightshift's own state folder."""
    ws = boundary.workspace
    out = {STATE_DIR_NAME}
    for path in (*boundary.references, *boundary.links):
        if Path(path).is_relative_to(ws):
            out.add(str(Path(path).relative_to(ws)))
    return out


def _siblings(home: Path) -> list[Path]:
    try:
        return [p for p in home.parent.iterdir() if p != home]
    except OSError:
        return []


def boundary_in(boundary: Boundary, tree: Path) -> Boundary:
    """The run's boundary for a command run in the verdict's tree: the workspace hidden whole (its git store, its
    ignored files), the references and what is read-only there at their places in the tree (place_references puts
    the references there: the oracle command does not see them, the tests read them), the rest as is."""
    ws, tree = boundary.workspace, Path(tree).resolve()

    def outside(paths) -> tuple[Path, ...]:
        return tuple(Path(p) for p in paths if not Path(p).is_relative_to(ws))

    def inside(paths) -> tuple[Path, ...]:
        return tuple(tree / Path(p).relative_to(ws) for p in paths if Path(p).is_relative_to(ws))
    mapped = inside(boundary.read_only)
    # The other trees (`check`'s of this workspace, other runs') hold their references: absent too; so is what a
    # command without a namespace left aside here
    others = [p for p in (tree.parent / "aside", *_siblings(tree.parent)) if p.is_dir() and not p.is_symlink()]
    hidden = (*outside(boundary.hidden), ws, *others)
    return replace(boundary, workspace=tree, hidden=hidden, references=(*outside(boundary.references),
                                                                        *inside(boundary.references)),
                   links=(*outside(boundary.links), *inside(boundary.links)),
                   read_only=(*outside(boundary.read_only), *mapped), outputs=inside(boundary.outputs))


def prepare(workspace: Path, owner: Path, boundary: Boundary, max_bytes: int = MAX_COMMIT_BYTES) \
        -> tuple[VerdictTree, Boundary]:
    """The tree of ``owner`` (a run's folder; the workspace for `check`) synced to the candidate, and the boundary
    of a command run there. Raises TreeProblem."""
    made = sync(workspace, home_for(owner, workspace), references_of(boundary), max_bytes)
    return made, boundary_in(boundary, made.path)


def forget(owner: Path, workspace: Path) -> None:
    """The run ended: its tree goes (a resumed run builds afresh at its first verdict)."""
    shutil.rmtree(home_for(owner, workspace), ignore_errors=True)


def clean_checkout(what: str = "the oracle command") -> str:
    """Where ``what`` runs at every verdict, and what follows for the user (check's note when it fails there)."""
    return (f"{what} runs, at every verdict, in a clean checkout of the stop's commit (tracked files only: no ignored "
            "build output, cache, data or environment of the workspace); it builds what it needs there, and what it "
            "reads must be committed")


CLEAN_CHECKOUT = clean_checkout()
