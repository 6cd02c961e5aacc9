"""A folder's entries, listed again only when the folder changed: the wait loop looks into inbox/, stops/, refusals/
and waits/ at every wake-up (four a second when it polls, as on NFS/Lustre, where each listing is a READDIR round
trip and a long run's stops/ holds thousands of files). A stat of the folder is one attribute call, often served
from the client's cache; the listing is made only when the folder's mtime (or inode) moved.

An entry made in the same clock tick as a listing leaves the folder's mtime as that listing saw it (git's "racily
clean" problem), so a listing is reused only when the folder's mtime was already SETTLE seconds old when it was
made: a folder that just changed is listed at every call until it is quiet. The result is the listing's names,
exactly what ``os.listdir`` would say, so callers keep their own filtering and reading.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

SETTLE = 2.0  # seconds; far above the mtime granularity of local and network filesystems

_cache: dict[str, tuple[tuple[int, int, int], tuple[str, ...]]] = {}
_filtered: dict[tuple[str, str], tuple[tuple[str, ...], list[Path]]] = {}
_derived: dict[tuple[str, str], tuple[tuple[str, ...], object]] = {}


def names(folder: Path) -> tuple[str, ...]:
    """The sorted entry names of ``folder`` (empty when it does not exist)."""
    key = str(folder)
    try:
        st = os.stat(key)
    except OSError:
        _cache.pop(key, None)
        return ()
    stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    seen = _cache.get(key)
    if seen is not None and seen[0] == stamp:
        return seen[1]
    try:
        found = tuple(sorted(os.listdir(key)))
    except OSError:
        return ()
    if time.time() - st.st_mtime > SETTLE:  # quiet long enough: no entry can hide in the same tick
        _cache[key] = (stamp, found)
    else:
        _cache.pop(key, None)
    return found


def matching(folder: Path, suffix: str) -> list[Path]:
    """``sorted(folder.glob("*" + suffix))`` from the cached listing: hidden names (files being written, renamed
    into place when whole) are left out as the glob leaves them out. Filtered again only for a new listing."""
    listed = names(folder)
    key = (str(folder), suffix)
    seen = _filtered.get(key)
    if seen is not None and seen[0] is listed:  # the very listing filtered last time
        return list(seen[1])
    found = [Path(folder) / name for name in listed if name.endswith(suffix) and not name.startswith(".")]
    _filtered[key] = (listed, found)
    return list(found)


def derived(folder: Path, compute):
    """``compute(names)`` of ``folder``'s listing, computed again only for a new listing (e.g. the requests of
    stops/ that nobody answered: a pure function of which files are there, since each is written whole)."""
    listed = names(folder)
    key = (str(folder), getattr(compute, "__qualname__", repr(compute)))
    seen = _derived.get(key)
    if seen is not None and seen[0] is listed:
        return seen[1]
    value = compute(listed)
    _derived[key] = (listed, value)
    return value
