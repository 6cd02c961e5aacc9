"""Where a verb writes a file the user named with ``-o``: whole (a temporary file renamed over it), private
(0600), and never over anything but a regular file or nothing: as root, renaming over ``/dev/null`` made it a
regular file and broke every program that writes to it. ``-o -`` writes to standard output.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.untrusted import kind_of

STDOUT = "-"


def refuse_unless_replaceable(out: Path, flag: str = "-o") -> None:
    """UserError unless ``out`` is absent or a regular file (a link, device, FIFO, socket or folder is refused)."""
    try:
        mode = os.lstat(out).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"cannot write {out} ({exc.strerror or exc}); choose another path with {flag}") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"{out} is {kind_of(mode)}: nightshift writes only a new or a regular file there; choose "
                        f"another path with {flag} (or {flag} - for standard output)")


def write_output(out: Path | str, data: bytes, flag: str = "-o") -> None:
    """``data`` to ``out`` (``-``: standard output), replacing only a regular file, as 0600."""
    if str(out) == STDOUT:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    out = Path(out)
    refuse_unless_replaceable(out, flag)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        refuse_unless_replaceable(out, flag)  # made a device or link meanwhile: still refused
        os.replace(tmp, out)
    except OSError as exc:
        raise UserError(f"cannot write {out} ({exc.strerror or exc}); choose another path with {flag}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
