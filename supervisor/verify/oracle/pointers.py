"""Reference data whose content was never fetched: a Git LFS pointer file (a clone without ``git lfs pull``) and
a git-annex symlink (or unlocked pointer file) whose object is absent (``git annex get``). Named as such, with the
command that fetches it, instead of "file signature not found" from a reader that met 130 bytes of text.

Only the link's text and the first bytes are read; a link is never followed out of the workspace here.
"""
from __future__ import annotations

import os
from pathlib import Path

LFS_HEAD = b"version https://git-lfs.github.com/spec/"
ANNEX_MARK = "annex/objects/"
POINTER_MAX = 1024  # both kinds of pointer are a few hundred bytes


def absent_content(path: Path) -> str | None:
    """One line naming the fix when ``path`` is a pointer to content that is not here; None otherwise."""
    path = path if isinstance(path, Path) else Path(path)  # a pinned candidate stays pinned
    try:
        if path.is_symlink():
            target = os.readlink(path)
            if ANNEX_MARK in target and not path.exists():
                return (f"{path}: a git-annex link whose content is not in this clone; run `git annex get "
                        f"{path.name}` in its folder (or `git annex get .`)")
            return None
        if not path.is_file() or path.stat().st_size > POINTER_MAX:
            return None
        with open(path, "rb") as handle:
            head = handle.read(POINTER_MAX)
    except OSError:
        return None
    if head.startswith(LFS_HEAD):
        size = next((line.split()[1] for line in head.decode("ascii", "replace").splitlines()
                     if line.startswith("size ") and len(line.split()) == 2), None)
        what = f" ({int(size):,} bytes)" if size and size.isdigit() else ""
        return (f"{path}: a Git LFS pointer, not the data{what}; run `git lfs pull` in the repository (install "
                "git-lfs first if `git lfs` is unknown)")
    if head.strip().startswith(b"/annex/objects/") and b"\n" not in head.strip():
        return f"{path}: a git-annex pointer whose content is not in this clone; run `git annex get {path.name}`"
    return None
