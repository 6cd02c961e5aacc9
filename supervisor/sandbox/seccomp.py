"""The seccomp filter every process inside the namespace runs under: what mounts cannot say. Default allow; EPERM for
the mount family (a tmpfs that hides a held-out folder cannot be unmounted, / cannot be remounted writable),
unshare/setns (no nested namespace to regain capabilities in), io_uring (it opens sockets and files without the
syscalls the rest of the policy watches), keyctl and the key syscalls, bpf, userfaultfd, perf_event_open, and the
terminal ioctls TIOCSTI / TIOCLINUX (keystrokes pushed into a terminal someone reads). Syscalls of another
architecture (32-bit x86's socketcall, int 0x80) end the process: libseccomp's bad-arch action.

AF_UNIX sockets stay allowed: multiprocessing's forkserver and Manager, and MPI, bind them in the private /tmp.
What keeps the user's and the machine's sockets out of reach is that no path to one exists inside (mounts.py and
hardening.py), not this filter.

The program is compiled once per process (once per boot: probe_cache.py keeps its file's name) with libseccomp (the
``pyseccomp`` ctypes binding from PyPI, or Debian's ``python3-seccomp``) and written once to the user's state folder;
bubblewrap reads it from a file descriptor (``--seccomp 9``), so every argv that uses it starts with
``seccomp_prefix``.
"""
from __future__ import annotations

import errno
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from nightshift.supervisor.run.paths import make_private_dir, user_state_dir
from nightshift.supervisor.sandbox import probe_cache

FD = 9  # the descriptor bubblewrap reads the program from (opened by the prefix's shell)
# What a nested sandbox (Claude Code's bubblewrap inside a turn) needs: mounts and namespaces of its own.
NESTED_ALLOWED = ("mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount",
                  "fsconfig", "fspick", "mount_setattr", "unshare", "setns")
REFUSED = NESTED_ALLOWED + ("io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key",
                            "request_key", "bpf", "userfaultfd", "perf_event_open")
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
# Without a namespace (confine.py) clone's namespace flags are refused too (unshare is already), and clone3, whose
# flags sit in memory a filter cannot read, answers ENOSYS so that the C library falls back to clone.
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
FIX = "pip install pyseccomp (libseccomp2 must be installed: Debian apt-get install libseccomp2)"


def _binding():
    try:
        import pyseccomp as binding
    except ImportError:
        import seccomp as binding  # Debian's python3-seccomp: the same API
    return binding


def compile_program(nested: bool = False, bare: bool = False) -> bytes:
    """The filter as raw BPF (raises ImportError / OSError where libseccomp is missing). ``nested``: for a turn that
    runs Claude Code's own sandbox inside ([policy] claude_sandbox): its bubblewrap needs a user namespace and
    mounts of its own, so the mount family and unshare/setns are allowed there (without capabilities in this
    namespace, a nested one cannot unmount or remount what this one locked). ``bare``: for a process without a
    namespace (confine.py): clone with a namespace flag refused, clone3 ENOSYS."""
    sc = _binding()
    program = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in (n for n in REFUSED if not (nested and n in NESTED_ALLOWED)):
        try:
            program.add_rule(sc.ERRNO(errno.EPERM), name)
        except (RuntimeError, OSError, ValueError):
            continue  # a syscall this architecture or libseccomp does not know: nothing to refuse
    for request in (TIOCSTI, TIOCLINUX):  # the ioctl's request is an unsigned int: compare the low 32 bits
        program.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    if bare:
        for flag in CLONE_NAMESPACES:
            program.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        program.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as fh:  # libseccomp writes to a descriptor
        program.export_bpf(fh)
        fh.seek(0)
        return fh.read()


@functools.lru_cache(maxsize=3)
def _compiled(nested: bool = False, bare: bool = False) -> tuple[bytes | None, str | None]:
    try:
        return compile_program(nested, bare), None
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        return None, f"no seccomp filter: libseccomp is not usable here ({type(exc).__name__}: {exc}); fix: {FIX}"


@functools.lru_cache(maxsize=3)
def _file_name(nested: bool, bare: bool = False) -> str:
    program, _problem = _compiled(nested, bare)
    return f"{hashlib.sha256(program).hexdigest()[:16]}.bpf" if program is not None else ""


def _program_file(nested: bool = False, bare: bool = False) -> tuple[Path | None, str | None]:
    """Compiled once per process; written where the current user's state folder is (it may change within a
    process: $XDG_STATE_HOME), when it is not there yet. A namespace costs one stat: the file's name is its
    content's hash (written by rename, never partly), so a file of that name holds this program."""
    state = user_state_dir()
    kept = _kept_program(state, nested, bare)
    if kept is not None and kept.is_file():
        return kept, None
    program, problem = _compiled(nested, bare)
    if program is None:
        return None, problem
    path = state / "seccomp" / _file_name(nested, bare)
    if not path.is_file():
        folder = make_private_dir(path.parent)
        tmp = folder / f".{path.name}.{os.getpid()}"
        tmp.write_bytes(program)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    _remember(state, nested, bare, path.name)
    return path, None


def _kept_key(nested: bool, bare: bool) -> str:
    return f"seccomp{int(nested)}{'-bare' if bare else ''}"  # one program a kind: namespaced, nested, bare


@functools.lru_cache(maxsize=8)
def _remember(state: Path, nested: bool, bare: bool, name: str) -> None:
    """Keep the program's file name for the boot (once per process and state folder)."""
    probe_cache.store(shutil.which("bwrap"), **{_kept_key(nested, bare): name})


@functools.lru_cache(maxsize=8)
def _kept_program(state: Path, nested: bool, bare: bool) -> Path | None:
    """The program compiled earlier in this boot from these rules (probe_cache.py), when its file still holds the
    bytes its name is the hash of: no libseccomp loaded, no `ldconfig -p`. Looked up once per process and state
    folder; after that a namespace costs one stat."""
    name = probe_cache.load(shutil.which("bwrap")).get(_kept_key(nested, bare))
    if not isinstance(name, str) or not name.endswith(".bpf") or "/" in name:
        return None
    path = state / "seccomp" / name
    try:
        held = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(held).hexdigest()[:16] == name.removesuffix(".bpf"):
        return path
    path.unlink(missing_ok=True)  # not the bytes its name promises: written afresh below
    return None


def program_file(nested: bool = False, bare: bool = False) -> Path | None:
    """The compiled filter on disk (None where libseccomp is not usable: ``seccomp_problem`` says why)."""
    return _program_file(nested, bare)[0]


def seccomp_problem() -> str | None:
    return _program_file()[1]


def seccomp_prefix(path: Path) -> list[str]:
    """Opens the program on descriptor ``FD`` for the bwrap that follows (the shell replaces itself with it)."""
    return ["sh", "-c", f'exec "$@" {FD}<"$0"', str(path)]  # sh: dash starts in a fraction of bash's time
