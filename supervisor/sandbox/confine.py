"""The launcher of the tiers without a namespace (tier.py's landlock and seccomp): it restricts itself, then becomes
the agent's turn or command, so every process the agent starts inherits the restriction and none can lift it.

``main([policy_file, "--", argv...])`` (standard library only: it runs with ``python -S -E -P``), from the policy
confinement.py wrote: the environment (socket variables unset, TMPDIR the private one), the Landlock domain (path
rules, scopes for signals and abstract sockets), then the seccomp program (raw BPF from seccomp.py, loaded with
prctl: no_new_privs is all an unprivileged process needs), then exec. A part the policy asks for that cannot be
applied ends the launcher (exit 126, one line naming it): it fails closed, never runs the agent looser than said.
"""
from __future__ import annotations

import ctypes
import json
import os
import sys

from nightshift.supervisor.sandbox import landlock

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(path: str) -> str | None:
    """Load the raw BPF program at ``path`` on this process (None when done, else why not)."""
    try:
        with open(path, "rb") as fh:
            code = fh.read()
    except OSError as exc:
        return f"the seccomp program {path}: {exc.strerror}"
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(landlock.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None


PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4


def drop_capabilities() -> str | None:
    """No capability for anything this process runs (root included): the bounding set emptied (what an exec could
    regain) and the ambient set cleared; with no_new_privs, no setuid program gives one back."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    bounding = _bounding()
    for cap in range(64):
        if not bounding >> cap & 1:  # not there: nothing to drop (dropping it anyway needs CAP_SETPCAP, which a
            continue                 # namespace's root started by bubblewrap no longer has)
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() not in (22,):  # EINVAL: no such cap
            return f"capability {cap} could not be dropped: {os.strerror(ctypes.get_errno())}"
    return None


def _bounding() -> int:
    """The capability bounding set, as its bits."""
    with open("/proc/self/status", encoding="ascii") as fh:
        return int(next((line.split()[1] for line in fh if line.startswith("CapBnd:")), "0"), 16)


def _privileged() -> bool:
    return (os.getuid() == 0 or os.geteuid() == 0) and _bounding() != 0


def apply(policy: dict) -> str | None:
    for name in policy.get("unset", []):
        os.environ.pop(name, None)
    os.environ.update(policy.get("set", {}))
    if _privileged():  # root without a namespace: it keeps no capability (a user has none to drop)
        problem = drop_capabilities()
        if problem:
            return problem
    if policy.get("landlock"):
        rules = [(path, int(rights)) for path, rights in policy["rules"]]
        problem = landlock.restrict(rules, int(policy["handled"]), int(policy.get("scoped", 0)))
        if problem:
            return f"Landlock could not be applied ({problem})"
    if policy.get("seccomp"):
        problem = load_seccomp(policy["seccomp"])
        if problem:
            return f"the seccomp filter could not be applied ({problem})"
    if policy.get("new_session"):
        try:  # no controlling terminal to push keystrokes into (a command, a headless turn)
            os.setsid()
        except OSError:
            pass  # already a session's leader: its caller gave it one
    if policy.get("chdir"):
        os.chdir(policy["chdir"])
    return None


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: confine POLICY.json -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        policy = json.load(fh)
    problem = apply(policy)
    if problem:
        print(f"nightshift: {problem}: the agent's process was not started", file=sys.stderr)
        return 126
    os.execvp(argv[2], argv[2:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
