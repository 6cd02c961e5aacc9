"""A reference kept in the workspace: a file anywhere in it (tracked, untracked or git-ignored) whose bytes equal a
reference file's, visible or held out. The oracle command cannot read a reference, but it can read such a copy
(the "warm start" from ``cache/init.h5`` that is ``reference/final.h5``), so the copy is the evidence, not an
exact match of the candidate.

Cheap by construction: the walk only lstat()s (no link is followed, no FIFO or device is opened; ``.nightshift/``,
read-only to the agent, is not entered; ``.git/`` is, since a file put there is as readable to the solver as any,
but its loose objects, compressed, are not even lstat()ed), a file is hashed only when its size equals a
reference's, and a digest is kept while the file's inode, size and times stay the same, so a supervisor asking at
every stop hashes nothing new.
The walk stops at ``MAX_ENTRIES`` entries and hashing at ``MAX_HASH_BYTES`` per verdict, and says what it left.

A held-out reference is named only as "a held-out reference": its path and content are never quoted.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.run import untrusted

MAX_ENTRIES = 200_000  # files and folders walked per verdict
MAX_HASH_BYTES = 4 << 30  # bytes hashed per verdict (same-size files only; cached ones cost nothing)
LOOSE = re.compile(r"[0-9a-f]{38}")
SKIP_TOP = ".nightshift"  # nightshift's run directories and a fleet's lanes (each lane's scan is its own)
_DIGESTS: dict[tuple, tuple[str, str]] = {}  # (path, dev, ino, size, mtime, ctime) -> (sha256, git blob id)


@dataclass
class Walk:
    """The workspace's regular files as the walk found them, and what it did not look at."""
    files: dict[str, os.stat_result] = field(default_factory=dict)  # path relative to the workspace -> lstat
    unscanned: list[str] = field(default_factory=list)  # notes: what the scan left out and why


def digests(path: Path, st: os.stat_result | None = None, root: Path | None = None) -> tuple[str, str]:
    """(sha256, git blob id) of a file, in one read; under ``root`` it is opened as untrusted.open_beneath
    allows (no link out, no FIFO). Kept while the file's inode, size and times stay the same."""
    st = st or os.stat(path)
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    kept = _DIGESTS.get(key)
    if kept:
        return kept
    fd = untrusted.open_beneath(root, path) if root is not None else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    sha, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % st.st_size)  # git hashes "blob <len>\0" + bytes
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
            blob.update(chunk)
    if len(_DIGESTS) > 8192:  # a workspace that churns through files: forget the old ones
        _DIGESTS.clear()
    _DIGESTS[key] = found = (sha.hexdigest(), blob.hexdigest())
    return found


def walk(root: Path, limit: int = MAX_ENTRIES) -> Walk:
    """Every regular file under ``root`` by lstat (links, FIFOs, sockets and devices are not files here)."""
    found = Walk()
    seen = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        loose = rel.startswith(".git/objects/") and len(rel) == 15  # .git/objects/<2 hex>/
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError as exc:
            found.unscanned.append(f"{rel or '.'}: cannot be listed ({exc.strerror or exc})")
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                found.unscanned.append(f"the copy scan stopped after {limit} files and folders (a workspace that "
                                       "large: move data the solver does not need out of it)")
                return found
            path = f"{rel}/{entry.name}" if rel else entry.name
            if loose and LOOSE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                continue  # a loose git object: zlib of "blob <n>\0"+bytes, never a file's bytes (not even stat'd)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if path != SKIP_TOP:
                    stack.append(path)
            elif stat.S_ISREG(st.st_mode):
                found.files[path] = st
    return found


def stashed_copies(root: Path, found: Walk, references: list[tuple[str, int, str]],
                   skip: set[str]) -> tuple[list[str], list[str], set[str]]:
    """(findings, notes, the paths found): each file of the walk, but those in ``skip`` (workspace-relative: the
    references, the candidates), whose bytes equal a reference's. ``references``: [(label, size, sha256)]."""
    by_size: dict[int, list[tuple[str, str]]] = {}
    for label, size, sha in references:
        by_size.setdefault(size, []).append((label, sha))
    findings, notes, hashed, named = [], list(found.unscanned), 0, set()
    for rel, st in sorted((r, st) for r, st in found.files.items() if st.st_size in by_size and r not in skip):
        same = by_size[st.st_size]
        if hashed + st.st_size > MAX_HASH_BYTES:
            notes.append(f"{rel} and the other files of a reference's size after it were not compared with the "
                         f"references (more than {MAX_HASH_BYTES >> 30} GiB to hash in one verdict)")
            break
        try:
            sha = digests(root / rel, st, root)[0]
        except OSError:
            continue  # replaced since the walk (a link or FIFO now): nothing the solver could read as a copy
        hashed += st.st_size
        for label, ref_sha in same:
            if sha == ref_sha:
                named.add(rel)
                findings.append(f"{rel} holds the same bytes as {label}: a copy of a reference kept in the "
                                f"workspace, which the solver can read in place of computing; delete it and "
                                f"compute the output (if the solver writes it, compare it in [[oracle.compare]])")
                break
    return findings, notes, named
