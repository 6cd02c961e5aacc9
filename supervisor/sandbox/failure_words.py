"""Why a command that runs the agent's code failed, in its own words, where the reason is the place it runs (the
launcher, the loader, the network, a socket) and no change to the solver would fix it: the line of its output
that says so, what that means here, and the fix. `check` and the verdict both word an oracle command's failure
from it, so "srun: error: ... Address family not supported by protocol" is never read as "expected while the
solver is not written", nor hidden behind the "no such file" of the candidates it did not write.

srun and the namespace: srun talks to slurmctld and slurmd over TCP both ways (slurmd connects back to ports srun
listens on for the step's I/O), so no narrow door forwards it: a command that starts ranks with srun needs the
machine's network (``[policy] command_network = true``) and munge's socket (bound in for a run whose backend is
Slurm, or whose oracle command names srun; boundary.py). Abstract sockets stay closed (the Landlock scope).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET

TAIL_BYTES = 64 * 1024  # of each output file: a launcher's last words, not a solver's whole log
SLURM_TOOLS = ("srun", "sbatch", "salloc", "sinfo", "squeue", "scontrol")
NOT_FOUND = re.compile(r"(?:^|[\s:])([\w.+-]+): (?:command )?not found\s*$")
NETWORK = re.compile(r"Address family not supported by protocol|Network is unreachable|Temporary failure in name "
                     r"resolution|Name or service not known|getaddrinfo|Could not resolve host|NameResolutionError")
MUNGE = re.compile(r"[Mm]unge (?:encode|decode) failed|munge\.socket|Protocol authentication error")
LOADER = re.compile(r"error while loading shared libraries|cannot open shared object file|Library not loaded")
REFUSED = re.compile(r"Connection refused")
LAUNCHER = re.compile(r"^(?:srun|salloc|sbatch): (?:error|fatal)|^\[mpiexec@|^mpirun|HYDRA|PMI[_ 2x]?.*(?:error|fail)",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Failure:
    line: str  # the command's own words
    what: str  # what they mean here
    fix: str  # what to change ("" where nothing of nightshift's would)

    def words(self) -> str:
        return f"{self.what}: \"{self.line}\"" + (f"; {self.fix}" if self.fix else "")


def _last_lines(path: str | None) -> list[str]:
    if not path:
        return []
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - TAIL_BYTES))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def output_lines(result: dict | None) -> list[str]:
    """The command's last lines of stderr; of stdout where stderr is empty (a command run with ``2>&1``)."""
    if not result:
        return []
    return _last_lines(result.get("stderr")) or list(result.get("stderr_tail") or []) or \
        _last_lines(result.get("stdout"))


def _uses_slurm(lines: list[str]) -> bool:
    return any(line.startswith(tuple(f"{tool}:" for tool in SLURM_TOOLS)) for line in lines)


def _classify(line: str, lines: list[str], network: bool, sockets: tuple[Path, ...]) -> tuple[str, str] | None:
    found = NOT_FOUND.search(line)
    if found:  # a launcher missing on the node is where it runs; a misspelt solver is the command's own
        name = found.group(1)
        if name in SLURM_TOOLS or name in ("mpirun", "mpiexec"):
            return (f"{name} is not on this node's PATH",
                    f"run nightshift where the {'Slurm' if name in SLURM_TOOLS else 'MPI'} client commands are "
                    f"installed, or put their folder on PATH for the oracle command (e.g. `module load slurm` in it)"
                    + ("; `nightshift check --job` checks a job's node" if name in SLURM_TOOLS else ""))
        return None  # any other program not found: the caller's "cannot run: fix the command" says it
    if MUNGE.search(line):
        if MUNGE_SOCKET not in sockets:
            return ("Slurm's client cannot reach munge's socket, which nightshift's namespace covers",
                    "set [backend] kind = \"slurm\" (its runs get munge's socket), or add "
                    f"\"{MUNGE_SOCKET}\" to [policy] sockets in nightshift.toml")
        return "munge refused or is not running on this node", "start munged (`munge -n | unmunge` checks it)"
    if NETWORK.search(line):
        if not network:
            who = "srun reaches slurmctld and slurmd over TCP, both ways" if _uses_slurm(lines) else \
                "it reaches the network"
            return (f"the command needs the network ({who}), and commands run without it",
                    "set [policy] command_network = true in nightshift.toml")
        return "a name or address could not be reached from this node", ""
    if LOADER.search(line):
        return ("a shared library is missing on this node",
                "load it where the oracle command starts (e.g. `module load ...` in the command) or set "
                "LD_LIBRARY_PATH there")
    if REFUSED.search(line):
        return "a connection was refused: the service it reaches is not listening, or not from here", ""
    if LAUNCHER.search(line):
        return "the launcher could not start the ranks", ""
    if line.startswith("bwrap:"):
        return "nightshift's namespace could not start the command", "`nightshift doctor` says why"
    return None


def environment_failure(result: dict | None, network: bool, sockets: tuple[Path, ...] = ()) -> Failure | None:
    """The first cause, read from the end of the command's output, that is where the command runs rather than what
    it computes; None when its words name none (a solver's own error is the agent's to fix)."""
    lines = output_lines(result)
    kinds = []
    for line in reversed(lines):
        said = _classify(line, lines, network, sockets)
        if said is not None:
            kinds.append((line, said))
    if not kinds:
        return None
    # the most specific cause wins over a launcher's generic last words ("Unable to allocate resources: ...")
    line, (what, fix) = next(((l, s) for l, s in kinds if s[1]), kinds[0])
    return Failure(line[:300], what, fix)
