"""The boundary's tier: the strongest this machine allows, computed here and only here, and named in every result.

    full      bubblewrap's namespace (sandbox.md): the agent's processes see only what the run lets them;
    landlock  no namespace can be made (user namespaces off, or no bubblewrap), but an unprivileged process can still
              restrict itself: Landlock (Linux 5.13+) makes held-out data and credential places unreadable and
              every write outside the workspace, a private TMPDIR and the agent's own state refused, and scopes
              signals and abstract sockets to the agent's own processes (ABI 6, Linux 6.12+); the seccomp filter
              refuses TIOCSTI, the namespace syscalls, mounts, io_uring... (confine.py applies both);
    seccomp   no Landlock in this kernel: the seccomp filter alone (files are held after the fact only);
    off       nothing can be had (or ``[policy] sandbox = "off"``): the hook and the after-the-fact checks alone.

``[policy] sandbox`` chooses what a run accepts: "auto" the strongest there is (said everywhere), "required" only
full, "landlock" full or landlock, "off" none.
"""
from __future__ import annotations

from dataclasses import dataclass

from nightshift.supervisor.sandbox import landlock
from nightshift.supervisor.sandbox.probe import bwrap_problem
from nightshift.supervisor.sandbox.seccomp import seccomp_problem

FULL, LANDLOCK, SECCOMP, OFF = "full", "landlock", "seccomp", "off"
ORDER = (FULL, LANDLOCK, SECCOMP, OFF)  # strongest first
# The least tier each [policy] sandbox value accepts ("auto" and "off" accept whatever there is).
LEAST = {"required": FULL, "landlock": LANDLOCK}
# What each weaker tier leaves open (the survey's probes measure them: surfaces.py), in a user's words.
LEFT_OPEN = {
    LANDLOCK: ("unix sockets by path and the machine's network (no network namespace)", "the shared /tmp (readable)",
               "the host's processes visible (no PID namespace; signals to them refused where Landlock has scopes)",
               "processes the agent starts can outlive its turn", "the shared /dev/shm and terminals",
               "git's control files (.git/config, hooks/) held after the fact (restored and named at every stop)",
               "and one limit: a folder holding a protected file takes no new entry (Landlock only grants), so "
               "new files go in a folder of their own, not the workspace's top level beside nightshift.toml"),
    SECCOMP: ("every file the user can read, held-out data included", "writes anywhere the user can write",
              "unix sockets, the network, the host's processes and /tmp"),
    OFF: ("everything the user can reach",),
}


@dataclass(frozen=True)
class Tier:
    name: str
    why: str | None = None  # why it is not full: the cause and its fix (None: full)
    abi: int = 0  # the kernel's Landlock ABI (landlock tier)
    filtered: bool = True  # the seccomp filter applies (libseccomp usable here)

    @property
    def confined(self) -> bool:
        """No namespace, but a launcher (confine.py) restricts the agent's processes."""
        return self.name in (LANDLOCK, SECCOMP)

    @property
    def hides_files(self) -> bool:
        """Held-out data and credential places are unreadable to the agent's processes."""
        return self.name in (FULL, LANDLOCK)

    @property
    def scopes(self) -> bool:
        """Signals and abstract sockets held to the agent's own processes (Landlock ABI 6)."""
        return self.name == LANDLOCK and self.abi >= landlock.SCOPED_ABI

    def label(self) -> str:
        """The short name every result carries: ``sandbox: full`` or ``sandbox: landlock (no namespace)``."""
        if self.name == FULL:
            return "sandbox: full"
        filter_words = "and seccomp" if self.filtered else "without seccomp (libseccomp missing)"
        what = {LANDLOCK: f"Landlock ABI {self.abi} {filter_words}, no namespace",
                SECCOMP: "seccomp only, no namespace", OFF: "none"}[self.name]
        return f"sandbox: {self.name} ({what})"

    def left_open(self) -> tuple[str, ...]:
        return LEFT_OPEN.get(self.name, ())

    def event(self) -> dict:
        """The tier as a run's events and results record it."""
        return {"tier": self.name, "label": self.label(), "why": self.why, "left_open": list(self.left_open())}


def machine_tier() -> Tier:
    """The strongest tier this machine gives: bubblewrap's probe is cached per bubblewrap found (probe.py), the
    Landlock ABI is one system call, libseccomp is compiled once (seccomp.py)."""
    problem = bwrap_problem()
    if problem is None:
        return Tier(FULL)
    version, filtered = landlock.abi(), seccomp_problem() is None
    if version >= 1:
        return Tier(LANDLOCK, problem if filtered else f"{problem}; and {seccomp_problem()}", version, filtered)
    if filtered:
        return Tier(SECCOMP, f"{problem}; and no Landlock in this kernel (Linux 5.13+ has it)")
    return Tier(OFF, f"{problem}; no Landlock in this kernel and {seccomp_problem()}")


def tier_for(mode: str) -> Tier:
    """The tier a run with ``[policy] sandbox = mode`` gets here."""
    if mode == "off":
        return Tier(OFF, '[policy] sandbox = "off"')
    return machine_tier()


def refusal(mode: str, tier: Tier) -> str | None:
    """Why ``[policy] sandbox = mode`` does not accept ``tier`` (a line with its fix), or None."""
    least = LEAST.get(mode)
    if least is None or ORDER.index(tier.name) <= ORDER.index(least):
        return None
    accept = ' or sandbox = "landlock" (accepts Landlock without a namespace)' if least == FULL and \
        tier.name == LANDLOCK else ""
    return (f"[policy] sandbox = \"{mode}\" but this machine gives {tier.label()}: {tier.why}; fix that, or set "
            f"sandbox = \"auto\"{accept} in nightshift.toml")
