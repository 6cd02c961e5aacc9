"""Reference values pasted into the agent's history: every version of a file its commits since the run's base
made (a paste committed, then taken out again, is still a paste), for the embedded-values scan (embedded.py).

The verdict's command never reads that history (verify/verdict_tree.py: no git history there), so such a paste
does not make an exact match a copy; it is named all the same, with its commit, as a paste in the workspace is.
Blobs never change: their numbers are cached by blob id, so a verdict parses only the blobs new since the last.
Git runs through gitguard; a blob is read as bytes, never executed, never checked out.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from nightshift.supervisor.gitguard import run_git, safe_env
from nightshift.supervisor.verify.oracle.embedded import MAX_FILE, blob_numbers

_NUMBERS: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}  # blob id -> blob_numbers (None: binary, too large)
_BINARY: set[str] = set()  # blob ids of binary blobs of at most MAX_FILE bytes (binary_paste.py reads them)


def history_blobs(workspace: Path, base: str | None, skip: set[Path]) -> dict[str, str]:
    """{"<path> at <commit>": blob id} of each file version the commits base..HEAD added or changed that the
    index no longer holds (the workspace's own files are scanned as files); ``skip``: resolved paths left out
    (the references and the candidates)."""
    if not base:
        return {}
    out = run_git(workspace, "log", "--format=%H", "--raw", "--no-abbrev", "-z", "--no-renames", "--diff-filter=AM",
                  f"{base}..HEAD", text=False)
    if out.returncode != 0:
        return {}
    current = run_git(workspace, "ls-files", "-s", "-z", text=False).stdout.split(b"\0")
    held = {line.split()[1].decode() for line in current if len(line.split()) > 1}
    wanted: dict[str, str] = {}
    commit, fields, i = "", out.stdout.split(b"\0"), 0
    while i < len(fields):  # "<commit>" NUL "\n:<mode> <mode> <old> <new> <status>" NUL "<path>" NUL ...
        item = fields[i].decode("utf-8", "replace").strip()
        if item.startswith(":") and i + 1 < len(fields):
            meta, path = item.split(), fields[i + 1].decode("utf-8", "replace")
            blob = meta[3] if len(meta) > 3 else ""
            if blob and blob not in held and blob not in wanted.values() and \
                    (workspace / path).resolve() not in skip:
                wanted[f"{path} at {commit[:12]}"] = blob
            i += 2
            continue
        commit = item.split()[0] if item else commit
        i += 1
    return wanted


def _read(workspace: Path, blobs: list[str]) -> dict[str, bytes]:
    """The blobs of at most MAX_FILE bytes, by id (one cat-file for the sizes, one for the contents)."""
    env = safe_env(workspace)
    sizes = subprocess.run(["git", "cat-file", "--batch-check"], cwd=workspace, env=env, capture_output=True,
                           input="".join(f"{b}\n" for b in blobs).encode(), timeout=600).stdout.decode().splitlines()
    small = [p[0] for p in (line.split() for line in sizes) if len(p) == 3 and p[1] == "blob" and int(p[2]) <= MAX_FILE]
    if not small:
        return {}
    raw = subprocess.run(["git", "cat-file", "--batch"], cwd=workspace, env=env, capture_output=True,
                         input="".join(f"{b}\n" for b in small).encode(), timeout=600).stdout
    out, at = {}, 0
    for blob in small:
        end = raw.index(b"\n", at)
        size = int(raw[at:end].split()[2])
        out[blob] = raw[end + 1:end + 1 + size]
        at = end + 1 + size + 1
    return out


def history_numbers(workspace: Path, blobs: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """file_numbers of each named blob (cached by blob id)."""
    new = sorted({b for b in blobs.values() if b not in _NUMBERS})
    if new:
        texts = _read(workspace, new)
        if len(_NUMBERS) > 16384:
            _NUMBERS.clear()
        for blob in new:
            _NUMBERS[blob] = blob_numbers(texts[blob]) if blob in texts else None
            if blob in texts and _NUMBERS[blob] is None:
                _BINARY.add(blob)
    return {name: found for name, blob in blobs.items() if (found := _NUMBERS.get(blob)) is not None and len(found[0])}


def line_in_blob(workspace: Path, blob: str, offset: int) -> int:
    text = read_blob(workspace, blob)
    return text[:offset].count(b"\n") + 1


def binary_blobs(blobs: dict[str, str]) -> dict[str, str]:
    """Of the named blobs (after history_numbers), the binary ones."""
    return {name: blob for name, blob in blobs.items() if blob in _BINARY}


def read_blob(workspace: Path, blob: str) -> bytes:
    return _read(workspace, [blob]).get(blob, b"")
