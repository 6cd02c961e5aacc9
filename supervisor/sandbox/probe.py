"""Can bubblewrap make a namespace on this machine, and which of the sandbox's parts can it give? Probed once per
process (a fork and a few mounts, ~5 ms each; a success kept for the boot by probe_cache.py), with the reason in words a
user can act on when it cannot (many clusters disable unprivileged user namespaces; some machines have no libseccomp).

The parts (``hardening``): ``userns``, a user namespace without capabilities that cannot make another one;
``seccomp``, the filter of seccomp.py; ``landlock``, the scope that keeps the machine's abstract sockets out of reach
where a namespace shares the machine's network (landlock.py; kernels before 6.12 lack it). A part the machine cannot
give is a door a run must accept by name (``[policy] open_doors``, ``verify-result --accept-open``) where held-out
answers are at stake."""
from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass

from nightshift.supervisor.sandbox import landlock, probe_cache
from nightshift.supervisor.sandbox.diagnose import namespace_cause, setuid_bwrap, userns_cause
from nightshift.supervisor.sandbox.seccomp import seccomp_problem


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make a mount namespace here, or None when it can."""
    return _probe(shutil.which("bwrap"))


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str | None) -> str | None:
    if not bwrap:
        return namespace_cause(None, None)
    if probe_cache.load(bwrap).get("namespace") == "ok":  # probed in this boot, nothing it depends on changed
        return None
    try:
        probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
                                "--tmpfs", "/tmp", "--unshare-pid", "--unshare-net", "true"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if probe.returncode != 0:
        return namespace_cause(bwrap, (probe.stderr.strip().splitlines() or ["no message"])[-1])
    probe_cache.store(bwrap, namespace="ok")  # only a success is kept: a failure may be passing (a timeout)
    return None


class _Known(Exception):
    """The user-namespace probe's success is kept for this boot (probe_cache.py)."""


def namespace_problem(mode: str) -> str | None:
    """Why a process of the agent's code runs without nightshift's namespace under ``[policy] sandbox = mode``."""
    if mode == "off":
        return '[policy] sandbox = "off"'
    return bwrap_problem()


@dataclass(frozen=True)
class Parts:
    userns: bool
    seccomp: bool
    landlock: bool = False  # the abstract-socket scope (only a part where the machine's network is shared)
    reasons: tuple[tuple[str, str], ...] = ()  # (door, why it is open and the fix)


@functools.lru_cache(maxsize=1)
def hardening_parts() -> Parts:
    """Which of the sandbox's parts this machine gives (both False where no namespace can be made at all)."""
    bwrap = shutil.which("bwrap")
    if _probe(bwrap) is not None:
        return Parts(False, False)
    reasons = []
    try:
        if probe_cache.load(bwrap).get("userns") == "ok":
            raise _Known
        probe = subprocess.run([bwrap, "--unshare-user", "--cap-drop", "ALL", "--disable-userns", "--ro-bind", "/",
                                "/", "--proc", "/proc", "true"], capture_output=True, text=True, timeout=10)
        userns = probe.returncode == 0
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        if userns:
            probe_cache.store(bwrap, userns="ok")
    except _Known:
        userns, why = True, ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        userns, why = False, str(exc)
    if not userns:
        setuid = " (this bubblewrap is setuid root: old distributions install it so)" if setuid_bwrap(bwrap) else ""
        reasons.append(("userns", f"no user namespace ({why}){setuid}: a process inside may make namespaces of its "
                        "own and, where the run is root, a setuid bubblewrap keeps it from none of root's files; "
                        f"{userns_cause(why)}; or bubblewrap >= 0.8"))
    problem = seccomp_problem()
    if problem:
        reasons.append(("seccomp", problem + " (mount/umount, unshare, io_uring and TIOCSTI stay allowed inside)"))
    version = landlock.abi()
    if version < landlock.SCOPED_ABI:
        reasons.append(("landlock", f"no Landlock scope for abstract sockets (this kernel's Landlock ABI is "
                        f"{version or 'absent'}, the scope needs {landlock.SCOPED_ABI}: Linux 6.12+), so a process "
                        "that shares the machine's network reaches its abstract sockets (@name); fix: a newer kernel, "
                        "or [policy] network = false and command_network = false"))
    return Parts(userns, problem is None, version >= landlock.SCOPED_ABI, tuple(reasons))


def open_parts(mode: str, shared_network: bool = True) -> list[tuple[str, str]]:
    """(door, why and the fix) for each part of the sandbox the machine does not give under ``[policy] sandbox``;
    ``shared_network``: some process inside shares the machine's network (else the Landlock scope is no part)."""
    problem = namespace_problem(mode)
    if problem is not None:
        return [("namespace", problem)]
    return [(door, why) for door, why in hardening_parts().reasons if shared_network or door != "landlock"]
