"""Abstract unix sockets (``@name``: no path, so no mount can cover them) out of reach where the namespace shares the
machine's network (``[policy] network = true`` for a turn, ``command_network = true`` for a command): a Landlock
scope (kernel 6.12+, Landlock ABI 6) that refuses connecting to an abstract socket made outside the process's own
domain. Sockets the agent's own processes make inside stay usable. Without network the namespace has its own
network namespace, where no abstract socket of the machine exists anyway.

``main(argv)``: apply the scope where the kernel has it, then exec ``argv`` (standard library only: it runs inside
with ``python -S -E -P``). ``abi()`` says which Landlock ABI the kernel offers (0: none). ``restrict`` is the whole
Landlock domain of the tier without a namespace (confine.py): path rules, the rights they handle, and the scopes.
"""
from __future__ import annotations

import ctypes
import os
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same numbers on x86_64 and aarch64
CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
PR_SET_NO_NEW_PRIVS = 38
SCOPED_ABI = 6
SCOPE_SIGNAL = 2
RULE_PATH_BENEATH = 1
# Filesystem rights (uapi/linux/landlock.h) and the ABI that brought them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (
    16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
REFER, TRUNCATE, IOCTL_DEV = 8192, 16384, 32768  # ABI 2, 3, 5
READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
         | MAKE_BLOCK | MAKE_SYM | REFER | TRUNCATE | IOCTL_DEV)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a file (not a folder) takes


def handled(version: int) -> int:
    """Every filesystem right the kernel's ABI ``version`` knows (what it does not know it cannot refuse)."""
    if version < 1:
        return 0
    rights = 0x1FFF | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)
    return rights | (IOCTL_DEV if version >= 5 else 0)


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


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def restrict(rules: list[tuple[str, int]], rights: int, scoped: int) -> str | None:
    """Put this process (and what it starts) in a domain where only ``rules`` (path, rights beneath it) grant the
    ``rights`` it handles, with the ``scoped`` scopes. None when done, else why not (the caller fails closed)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _RulesetAttr(rights, 0, scoped)
    fd = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        for path, allowed in rules:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # gone since the rules were written: nothing to grant
            try:
                if not os.path.isdir(f"/proc/self/fd/{target}"):
                    allowed &= FILE_RIGHTS
                beneath = _PathBeneath(allowed & rights, target)
                libc.syscall(ADD_RULE, fd, ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(beneath), ctypes.c_uint32(0))
            finally:
                os.close(target)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
        if libc.syscall(RESTRICT_SELF, fd, ctypes.c_uint32(0)) != 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
        return None
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
