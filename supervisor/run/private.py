"""Private files written whole: created 0600 (other users share the login node), filled under a temporary name and
renamed into place, so a reader (another process, another login node) sees the old file or the new one, never half.

Standard library only, and not even pathlib: the agent's hooks write through here (the Stop hook's channel, the
PreToolUse hook's refusals), started with ``python -S`` before or after every tool call.
"""
from __future__ import annotations

import json
import os
from typing import Any


def write_private_bytes(path: str | os.PathLike, data: bytes, durable: bool = False) -> None:
    """Write ``data`` to ``path`` by rename. ``durable``: fsync before the rename, for a file whose loss would lose
    a record (the user's registry of runs), not for one that is written again soon anyway."""
    folder, name = os.path.split(os.fspath(path))
    # The pid in the name: two processes writing the same file at once each rename a whole file of their own.
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_private_json(path: str | os.PathLike, doc: Any, indent: int | None = None) -> None:
    """``doc`` as JSON, written by rename into a 0600 file."""
    write_private_bytes(path, json.dumps(doc, indent=indent).encode())
