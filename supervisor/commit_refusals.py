"""What a shift's commit never takes from the workspace, whatever the agent left there, each named and left for
the user (as files under a filter driver are):

- a symlink that points out of the workspace: committed, it puts the path of (say) a key file into the user's
  history, and the user's tools follow it;
- a file over the size limit (its apparent size: a 1 TB sparse candidate is refused as one, whose `git add` hashed
  for 50 minutes and grew .git by hundreds of MB);
- a nested repository (a folder with its own .git): git would add it as a gitlink, and the user's `git status`
  then runs git inside it, with the config the agent wrote there.

Read with lstat only: nothing is opened, nothing followed.

May import: gitguard.
"""
from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

from nightshift.supervisor.gitguard import git_dirs, run_git

GITLINK = b"160000"
GITLINK_MODE = (0o160000).to_bytes(4, "big")  # an index entry's mode field, as git writes it
MAX_COMMIT_BYTES = 100 << 20  # the default of [verify] max_commit_mb
KINDS = {"link_out": "a symlink out of the workspace", "too_large": "over the size limit",
         "nested_repo": "a nested repository"}


def refused_paths(root: Path, paths: list[str], max_bytes: int = MAX_COMMIT_BYTES) -> dict[str, list[str]]:
    """{kind: [path, ...]} of the ``paths`` (relative to ``root``) a commit must leave out; kinds as in KINDS."""
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for rel in paths:
        kind = _refusal(Path(root), rel.rstrip("/"), max_bytes)
        if kind:
            found[kind].append(rel)
    return {kind: names for kind, names in found.items() if names}


def _refusal(root: Path, rel: str, max_bytes: int) -> str | None:
    try:
        st = os.lstat(root / rel)
    except OSError:  # gone (a deletion is committed as one)
        return None
    if stat.S_ISLNK(st.st_mode):
        return "link_out" if link_leaves(root, rel) else None
    if stat.S_ISDIR(st.st_mode):
        return "nested_repo" if os.path.lexists(root / rel / ".git") else None
    if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
        return "too_large"
    return None


def link_leaves(root: Path, rel: str) -> bool:
    """Does the symlink at ``rel`` point out of ``root``, read as text (an absolute target, or `..` past the top)?
    Its target is not looked at: where it points is what would be committed."""
    target = os.readlink(root / rel)
    if os.path.isabs(target):
        return True
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return joined == ".." or joined.startswith("../")


def gitlinks_added(ws: Path, run_base: str | None) -> list[str]:
    """The gitlinks (submodule entries) in the index that ``run_base`` did not have: the agent's, made with its own
    `git add` or commit (a commit leaves the index equal to HEAD; one taken back out of the index is a staged
    deletion, which our commit makes). A commit of nightshift's removes them (never the folder). One git call a
    stop: the starting commit's gitlinks are read once."""
    if not run_base:  # no starting commit known (an empty repository, or a run older than this record): the
        return []     # user's own submodules cannot be told from the agent's, and are never touched
    if not _index_may_hold_gitlink(ws):
        return []
    return sorted(_gitlinks(ws, None) - _gitlinks_at(str(ws), run_base))


def _index_may_hold_gitlink(ws: Path) -> bool:
    """Does .git/index hold the bytes of a gitlink's mode (0o160000) anywhere? Without them no entry is a gitlink,
    and the git call is saved (the common case: a stop then costs a read of the index, not a git process)."""
    try:
        fd = os.open(git_dirs(ws)[0] / "index", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return True  # no index, or an odd one: ask git
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return True
        return GITLINK_MODE in fh.read()


@lru_cache(maxsize=16)
def _gitlinks_at(ws: str, commit: str) -> frozenset[str]:
    return frozenset(_gitlinks(Path(ws), commit))


def _gitlinks(ws: Path, treeish: str | None) -> set[str]:
    """Paths of the gitlinks in ``treeish`` (None: the index)."""
    args = ["ls-files", "-s", "-z"] if treeish is None else ["ls-tree", "-r", "-z", treeish]
    out = run_git(ws, *args, text=False)
    if out.returncode != 0:
        return set()
    return {entry.split(b"\t", 1)[-1].decode("utf-8", "surrogateescape") for entry in out.stdout.split(b"\0")
            if entry.startswith(GITLINK)}
