"""A child process that dies with the process that started it, even by kill -9 (Linux's parent-death signal).

Given as ``preexec_fn`` to the git processes nightshift starts: a supervisor killed while its `git add` hashes a
giant leaves no orphan hashing for an hour. It runs in the child between fork and exec, so it only calls prctl
through a libc handle loaded beforehand (no import, no lock). Elsewhere than Linux it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True) \
    if sys.platform.startswith("linux") else None


def die_with_parent() -> None:
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == 1:  # the parent died before prctl took hold: go now
            os._exit(1)
