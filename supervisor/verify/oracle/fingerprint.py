"""Cheap fingerprints of the reference files, taken at `nightshift init`, so `nightshift check` can say which
reference was edited since, however large the references are.

A fingerprint is the size, the modification time and a hash of the first and last 64 KiB: it reads at most 128 KiB
per file (a full hash of a gigabyte takes seconds). Where the full hash is also known (init copies and hashes
references up to ``integrity``'s limit), a file whose time changed is confirmed by its full hash, so a file
that was only touched is not reported.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from nightshift.supervisor.verify.oracle.integrity import MANIFEST, sha256_of

FINGERPRINTS = "fingerprints.json"
EDGE = 1 << 16  # 64 KiB at each end: a change elsewhere shows in the size or the time


def fingerprint(path: Path) -> dict:
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(EDGE))
        if stat.st_size > 2 * EDGE:
            handle.seek(-EDGE, os.SEEK_END)
            digest.update(handle.read(EDGE))
        elif stat.st_size > EDGE:
            digest.update(handle.read())
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "edges": digest.hexdigest()}


def record_fingerprints(files: dict[str, Path], store: Path) -> None:
    """``files``: reference spec (as in nightshift.toml, without a part) -> its path."""
    data = {"v": 1, "files": {rel: fingerprint(path) for rel, path in files.items() if path.is_file()}}
    tmp = store / f".{FINGERPRINTS}.tmp"
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, store / FINGERPRINTS)


def changed_since_init(files: dict[str, Path], store: Path) -> list[tuple[str, str]]:
    """(reference, what happened) for each reference that differs from its fingerprint at init."""
    try:
        known = json.loads((store / FINGERPRINTS).read_text())["files"]
    except (OSError, ValueError, KeyError):
        return []
    try:
        hashes = {rel: e["sha256"] for rel, e in json.loads((store / MANIFEST).read_text())["references"].items()}
    except (OSError, ValueError, KeyError):
        hashes = {}
    found = []
    for rel, path in files.items():
        before = known.get(rel)
        if before is None:
            continue
        if not path.is_file():
            found.append((rel, "deleted"))
            continue
        now = fingerprint(path)
        if now["size"] != before["size"] or now["edges"] != before["edges"]:
            found.append((rel, "changed"))
        elif now["mtime_ns"] != before["mtime_ns"] and (rel not in hashes or sha256_of(path) != hashes[rel]):
            found.append((rel, "changed" if rel in hashes else "modified (its time changed)"))
    return found
