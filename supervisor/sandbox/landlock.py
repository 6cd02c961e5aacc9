"""Abstract unix sockets (``@name``: no path, so no mount can cover them) out of reach where the namespace shares the
machine's network (``[policy] network = true`` for a turn, ``command_network = true`` for a command): a Landlock
scope (kernel 6.12+, Landlock ABI 6) that refuses connecting to an abstract socket made outside the process's own
domain. Sockets the agent's own processes make inside stay usable. Without network the namespace has its own
network namespace, where no abstract socket of the machine exists anyway.

``main(argv)``: apply the scope where the kernel has it, then exec ``argv`` (standard library only: it runs inside
with ``python -S -E -P``). ``abi()`` says which Landlock ABI the kernel offers (0: none).
"""
from __future__ import annotations

import ctypes
import os
import sys

CREATE_RULESET, RESTRICT_SELF = 444, 446  # the same numbers on x86_64 and aarch64
CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
PR_SET_NO_NEW_PRIVS = 38
SCOPED_ABI = 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(version, 0)


def scope_abstract_sockets() -> bool:
    """Put this process (and what it starts) in a domain that cannot reach abstract sockets made outside it."""
    if abi() < SCOPED_ABI:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _RulesetAttr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET)
    fd = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return False
    try:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        return libc.syscall(RESTRICT_SELF, fd, ctypes.c_uint32(0)) == 0
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: landlock COMMAND [ARG...]", file=sys.stderr)
        return 2
    scope_abstract_sockets()
    os.execvp(argv[0], argv)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
