"""Can bubblewrap make a namespace on this machine? Probed once per process (a fork and a few mounts, ~5 ms), with
the reason in words a user can act on when it cannot (many clusters disable unprivileged user namespaces)."""
from __future__ import annotations

import functools
import shutil
import subprocess


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make a mount namespace here, or None when it can."""
    return _probe(shutil.which("bwrap"))


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str | None) -> str | None:
    if not bwrap:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
                                "--tmpfs", "/tmp", "--unshare-pid", "--unshare-net", "true"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot create namespaces here ({why}; many clusters disable user namespaces)"
    return None


def namespace_problem(mode: str) -> str | None:
    """Why a process of the agent's code runs without nightshift's namespace under ``[policy] sandbox = mode``."""
    if mode == "off":
        return '[policy] sandbox = "off"'
    return bwrap_problem()
