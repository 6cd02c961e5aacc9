"""When the supervisor itself fails: every crash leaves a trace a user can act on, even on a full disk.

``reason`` turns any exception into one line (what failed, where, and the fix when one is known: a full disk,
a stale git lock). ``record`` writes it as a ``supervisor.crashed`` event when the disk allows, always into the
*last word* (a small file whose space is reserved when the supervisor starts, overwritten in place, so it can
be written when nothing else can), and tells the human through `[notify]`. `nightshift status` shows it.
"""
from __future__ import annotations

import errno
import json
import os
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from nightshift.supervisor.errors import is_user_error

LAST_WORD_BYTES = 4096
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def reason(exc: BaseException, run_id: str) -> str:
    """One line: the error and, where it is known, the fix."""
    resume = f"then `nightshift resume {run_id}`"
    if isinstance(exc, OSError) and exc.errno in DISK_FULL:
        return f"disk full: could not write {exc.filename or 'a file'}; free space, {resume}"
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return f"cannot write {exc.filename or 'a file'} ({exc.strerror}); make it writable, {resume}"
    if is_user_error(exc):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}{where}; {resume} after fixing the cause"


def reserve_last_word(path: Path) -> None:
    """Keep LAST_WORD_BYTES of disk for the crash note (blank, so it reads as no crash)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, b" " * LAST_WORD_BYTES, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass  # no room even for this: the crash handler still notifies


def write_last_word(path: Path, note: dict[str, Any]) -> bool:
    """Overwrite the reserved bytes in place: no new block is needed, so this works on a full disk."""
    blob = json.dumps(note).encode()[: LAST_WORD_BYTES - 1]
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.pwrite(fd, blob + b" " * (LAST_WORD_BYTES - len(blob)), 0)
        os.fsync(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def read_last_word(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").strip()
        return json.loads(text) if text else None
    except (OSError, ValueError):
        return None


def record(exc: BaseException, run_id: str, last_word: Path, emit: Callable[..., Any], shift: int | None,
           tell: Callable[[str, str], None], say: Callable[[str], None]) -> str:
    """Leave every trace the disk allows; never raise (the original error is what the caller re-raises)."""
    why = reason(exc, run_id)
    exc.nightshift_recorded = True  # type: ignore[attr-defined]
    write_last_word(last_word, {"reason": why, "at": time.time(), "pid": os.getpid()})
    for attempt in (lambda: emit("supervisor.crashed", shift, reason=why, error=type(exc).__name__),
                    lambda: say(f"supervisor crashed: {why}"),
                    lambda: tell("crashed", f"supervisor crashed: {why}")):
        try:
            attempt()
        except Exception:  # noqa: BLE001 - a full disk may refuse one trace; the others are still tried
            pass
    return why
