"""The verdict's own tree: where the oracle command and the tests that decide a verdict run, made from the tree of
the commit the verdict names (candidate_index: what the stop's commit will hold) and written by nightshift only.

Why: a verdict is about that commit. In the workspace, the agent can leave state beside the tree (binaries newer
than the source after a `cp -p` of the old source, ignored build outputs, caches, a stale install in a venv) and
the answers in reach (the references committed to git: `git show HEAD:reference/...`, a stash, another branch).
Here there is only the commit's tracked files, without the references, and what nightshift's own earlier verdicts
of this run built there; the workspace itself is hidden while the command runs (check.py).

Incremental: the tree persists between the run's verdicts (a private folder of the user's state, out of every
agent process's reach: the namespace shows it read-only at most, and only to the agent's turn). A file whose blob
and mode are those of the last verdict, and whose inode and ctime are still the ones written then (no process can
set a ctime back), keeps its mtime, so make rebuilds only what changed; every other tracked file is written anew
(mtime now); a file the commit no longer holds is removed; build outputs stay. Git is not there with its history:
``.git`` is a fresh repository of one commit whose tree lists the candidate's paths and blob ids, without a single
blob (a build's `git describe --always`, `git rev-parse HEAD`, `git ls-files` answer; nothing of the repository's
history, stash, reflog, other branches or packs is there to read), with the nearest tag of HEAD when there is one.

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
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from nightshift.supervisor.candidate_index import stage_candidate
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES
from nightshift.supervisor.gitguard import git_dirs, run_git, safe_env
from nightshift.supervisor.run.paths import STATE_DIR_NAME, make_private_dir, user_state_dir
from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.sandbox.mounts import HOST_TMP

MANIFEST = "manifest.json"  # path -> [mode, blob, inode, ctime_ns] of each file this module wrote
GIT_STAMP = "git.json"  # the tree the .git there lists, and the stat of its files then (_git_kept)
REFERENCES = "references.json"  # path -> [the source's stat, the copy's (inode, ctime_ns)] of each reference placed
IDENTITY = {"GIT_AUTHOR_NAME": "nightshift", "GIT_AUTHOR_EMAIL": "nightshift@localhost",
            "GIT_COMMITTER_NAME": "nightshift", "GIT_COMMITTER_EMAIL": "nightshift@localhost",
            "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}


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


@contextmanager
def _blobs(workspace: Path, shas: list[str]):
    """git cat-file --batch over ``shas``, read as a stream (a blob of gigabytes never sits in memory); the ids are
    fed from a thread so neither side waits on a full pipe."""
    proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=workspace, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=safe_env(workspace))

    def feed() -> None:
        try:
            proc.stdin.write("".join(f"{sha}\n" for sha in shas).encode())
            proc.stdin.close()
        except OSError:
            pass
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield proc.stdout
    finally:
        proc.kill()
        proc.wait()
        feeder.join(timeout=5)


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


def _clear(root: Path, parts: list[str]) -> Path:
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


def _stat(path: Path) -> list[int] | None:
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
            target = _clear(root, path.split("/"))
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


def _tagged(workspace: Path) -> bool:
    """Does the repository have a tag at all (its files read: no git process for the usual answer, no)?"""
    try:
        common = git_dirs(workspace)[1]
        packed = common / "packed-refs"
        return any((common / "refs" / "tags").iterdir()) or (packed.is_file() and b" refs/tags/" in packed.read_bytes())
    except OSError:
        return True  # not readable as files: ask git


def git_without_history(workspace: Path, root: Path, entries: dict[str, tuple[str, str]],
                        near: str = "HEAD") -> str | None:
    """A fresh ``.git`` in ``root`` of one commit listing ``entries`` (no blob, no history; its id depends on the
    entries alone, so `verify-result --rerun` makes the same one); the nearest tag of ``near`` in the workspace
    named on it. Returns why it could not be made, or None."""
    dotgit = root / ".git"
    _clear(root, [".git"])
    env = {**safe_env(root), "GIT_DIR": str(dotgit), "GIT_WORK_TREE": str(root), **IDENTITY}
    env.pop("GIT_INDEX_FILE", None)

    def git(*args: str, stdin: bytes | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True, timeout=300)
        if proc.returncode:
            said = proc.stderr.decode(errors="replace").strip().splitlines()
            raise TreeProblem(f"git {args[0]}: {said[-1] if said else proc.returncode}")
        return proc.stdout.decode().strip()
    try:
        for folder in ("objects", "refs/heads", "refs/tags"):  # a repository by hand: one git process less
            (dotgit / folder).mkdir(parents=True)
        (dotgit / "HEAD").write_text("ref: refs/heads/main\n")
        (dotgit / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        info = b"".join(f"{m} {s}\t".encode() + p.encode("utf-8", "surrogateescape") + b"\0"
                        for p, (m, s) in sorted(entries.items()))
        git("update-index", "--add", "-z", "--index-info", stdin=info)
        commit = git("commit-tree", git("write-tree", "--missing-ok"), "-m", "the verdict's tree (no history)")
        (dotgit / "refs" / "heads" / "main").write_text(commit + "\n")
        tag = run_git(workspace, "describe", "--tags", "--abbrev=0", near).stdout.strip() if _tagged(workspace) else ""
        if tag and run_git(workspace, "check-ref-format", f"refs/tags/{tag}").returncode == 0:
            git("update-ref", f"refs/tags/{tag}", commit)
    except (TreeProblem, OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(dotgit, ignore_errors=True)
        return f"no git repository in the verdict's tree ({exc}): a build that asks git for its version gets none"
    return None


def _git_stamp(root: Path, tree: str) -> dict:
    dotgit = root / ".git"
    try:
        head, ref = (dotgit / "HEAD").read_text(), (dotgit / "refs" / "heads" / "main").read_text()
    except OSError:
        head, ref = "", ""
    return {"tree": tree, "head": head, "ref": ref, "index": _stat(dotgit / "index"), "dir": _stat(dotgit)}


def _git_kept(home: Path, root: Path, tree: str) -> bool:
    """The git made at the last verdict lists this same tree, and nothing rewrote its index, HEAD or ref since:
    kept (no git process; nightshift runs none in it afterwards)."""
    try:
        return json.loads((home / GIT_STAMP).read_text()) == _git_stamp(root, tree)
    except (OSError, ValueError):
        return False


def _remember_git(home: Path, root: Path, tree: str) -> None:
    (home / GIT_STAMP).write_text(json.dumps(_git_stamp(root, tree)))


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
                     or _stat(root / p) != old[p][2:]]
    (home / MANIFEST).unlink(missing_ok=True)  # a crash while writing leaves no manifest: all is written next time
    made: list[str | None] = []  # the git there is made while the files are written (it touches only .git)
    maker = None if _git_kept(home, root, tree) else \
        threading.Thread(target=lambda: made.append(git_without_history(workspace, root, listed)), daemon=True)
    if maker is not None:
        maker.start()
    try:
        _write(workspace, root, found.written, entries)
    finally:
        if maker is not None:
            maker.join()
    manifest = {p: [*entries[p], *(_stat(root / p) or [0, 0])] for p in entries}
    found.notes += [p for p in made if p]
    _remember_git(home, root, tree)
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
                   read_only=(*outside(boundary.read_only), *mapped))


def prepare(workspace: Path, owner: Path, boundary: Boundary, max_bytes: int = MAX_COMMIT_BYTES) \
        -> tuple[VerdictTree, Boundary]:
    """The tree of ``owner`` (a run's folder; the workspace for `check`) synced to the candidate, and the boundary
    of a command run there. Raises TreeProblem."""
    made = sync(workspace, home_for(owner, workspace), references_of(boundary), max_bytes)
    return made, boundary_in(boundary, made.path)


def place_references(tree: Path, workspace: Path, visible: list[Path]) -> dict[tuple[int, int], str]:
    """The visible references, as the workspace holds them now (the oracle restored any the agent changed), copied
    to their places in the tree: read-only for the tests, absent for the oracle command (its namespace hides them,
    as in the workspace). Copied only when the source or the copy changed (REFERENCES: the stat of both).
    Returns {(st_dev, st_ino): path} of the copies (a candidate that is one of them is refused, as a reference)."""
    home, ws = Path(tree).parent, Path(workspace).resolve()
    try:
        known = json.loads((home / REFERENCES).read_text())
    except (OSError, ValueError):
        known = {}
    placed = {}
    for source in visible:
        if not source.is_relative_to(ws) or not source.is_file():
            continue
        rel = str(source.relative_to(ws))
        st = source.stat()
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        target = Path(tree) / rel
        if known.get(rel, [None])[0] != stamp or known[rel][1] != _stat(target):
            target = _clear(Path(tree), rel.split("/"))
            shutil.copyfile(source, target, follow_symlinks=False)
        placed[rel] = [stamp, _stat(target)]
    (home / REFERENCES).write_text(json.dumps(placed))
    copies = {}
    for rel in placed:
        try:
            st = os.stat(Path(tree) / rel)
        except OSError:
            continue
        copies[(st.st_dev, st.st_ino)] = rel
    return copies


@contextmanager
def references_aside(tree: Path, workspace: Path, visible: list[Path]):
    """Where no namespace hides them: the tree's copies of the references leave it while the command runs."""
    home, ws = Path(tree).parent, Path(workspace).resolve()
    aside = make_private_dir(home / "aside")
    moved = []
    for n, source in enumerate(visible):
        target = Path(tree) / source.relative_to(ws) if source.is_relative_to(ws) else None
        if target is not None and (target.exists() or target.is_symlink()) and not target.is_dir():
            os.replace(target, aside / str(n))
            moved.append((aside / str(n), target))
    try:
        yield
    finally:
        for held, target in moved:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(held, target)


def forget(owner: Path, workspace: Path) -> None:
    """The run ended: its tree goes (a resumed run builds afresh at its first verdict)."""
    shutil.rmtree(home_for(owner, workspace), ignore_errors=True)


CLEAN_CHECKOUT = ("the oracle command runs, at every verdict, in a clean checkout of the stop's commit (tracked files "
                  "only: no ignored build output, cache, data or environment of the workspace); it builds what it "
                  "needs there, and what it reads must be committed")
