"""A command that runs the agent's code (the test command, ``[verify] commands``, the oracle command, a preflight
probe) in its own namespace: a fresh private TMPDIR, no network unless ``[policy] command_network``, held-out data
absent (and, for the oracle command, every reference), and nothing it starts outlives it: what it left running is
named (``leftovers``) and ended with it (the PID namespace ends with the command).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.sandbox.confinement import confine_argv
from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET
from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

LEFTOVERS = ".nightshift-leftovers"  # in the private TMPDIR, written inside after the command ended
# Run the command as a child, then list every process of the namespace but its init (1) and this shell; builtins
# only, so the listing starts no process of its own.
SCAN = ('for p in /proc/[0-9]*; do n=${p#/proc/}; if [ "$n" != 1 ] && [ "$n" != $$ ] && '
        'read -r c < "$p/comm" 2>/dev/null; then echo "$n $c"; fi; done')
INNER = f'bash -c "$1"; status=$?\n{SCAN} > "/tmp/{LEFTOVERS}"\nexit $status'
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|^ANTHROPIC_|^NIGHTSHIFT_", re.IGNORECASE)
NETWORK_WORDS = ("Network is unreachable", "Temporary failure in name resolution", "Name or service not known",
                 "getaddrinfo", "Could not resolve host", "NameResolutionError")


def command_env() -> dict[str, str]:
    """The supervisor's environment without secrets: a command runs code the agent wrote."""
    return {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}


@dataclass
class CommandRun:
    argv: list[str]
    sealed: bool  # in a namespace
    tmp: Path | None = None
    notes: list[str] = field(default_factory=list)

    def leftovers(self) -> list[str]:
        """``"<pid> <name>"`` of each process the command left running (ended with it)."""
        if self.tmp is None:
            return []
        try:
            return [line for line in (self.tmp / LEFTOVERS).read_text(errors="replace").splitlines() if line][:20]
        except OSError:
            return []


@contextmanager
def command_namespace(boundary: Boundary | None, kind: str, command: str, written: frozenset[Path] = frozenset(),
                      empty: Path | None = None, outputs: Path | None = None) -> Iterator[CommandRun]:
    """``kind``: "test", "verify", "oracle" or "probe". Yields the argv to start, in a session of its own
    (``start_new_session=True``: no controlling terminal; ``bash -c command`` where no namespace can be made, with a
    note saying so); the private TMPDIR is removed afterwards. ``outputs``: the
    folder of the run where the command's own reports go (its JUnit file), writable inside."""
    tier = boundary.tier if boundary is not None and boundary.problem is not None else None
    if boundary is None or (boundary.problem is not None and not tier.confined):
        why = "no boundary" if boundary is None else boundary.problem
        yield CommandRun(["bash", "-c", command], False, notes=[f"the {kind} command ran without a namespace ({why})"])
        return
    tmp = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=boundary.scratch()))
    hidden = list(boundary.hidden) + boundary.for_commands()
    read_only = list(boundary.read_only)
    if kind == "oracle":
        hidden += list(boundary.references) + list(boundary.links)
    else:
        read_only += list(boundary.references)
    ns = Namespace(workspace=boundary.workspace, tmp=tmp, hidden=hidden, read_only=read_only,
                   writable=[outputs] if outputs is not None else [], network=boundary.command_network,
                   written=written, empty=empty, deny_read=boundary.deny_read, sockets=boundary.sockets,
                   # Its own session comes from the caller: every caller starts the argv with start_new_session (it
                   # also kills the group on a timeout). A second session inside costs a new scheduler autogroup,
                   # ~4-5 ms a command on a loaded machine, and adds nothing (tests/test_sandbox_session.py).
                   new_session=False)
    try:  # with command_network, bwrap_argv ends in the Landlock launcher: abstract sockets out of reach
        if tier is not None:  # no namespace: the launcher's Landlock and seccomp (no PID namespace to scan)
            argv = confine_argv(ns, tier, tmp.with_name(tmp.name + ".confine.json"), boundary.outputs)
            yield CommandRun(argv + ["bash", "-c", command], tier.hides_files, tmp,
                             notes=[f"the {kind} command ran without a namespace ({boundary.problem}), held by "
                                    f"{tier.label()}"])
            return
        yield CommandRun(bwrap_argv(ns) + ["bash", "-c", INNER, f"nightshift-{kind}", command], True, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.with_name(tmp.name + ".confine.json").unlink(missing_ok=True)


def leftover_line(kind: str, leftovers: list[str]) -> str | None:
    if not leftovers:
        return None
    names = ", ".join(sorted({line.split(" ", 1)[-1] for line in leftovers}))
    return (f"the {kind} command left {len(leftovers)} process(es) running ({names}): ended with it; nothing a "
            "command starts outlives it")


def command_reach(boundary: Boundary | None) -> tuple[bool, tuple[Path, ...]]:
    """(does a command have the machine's network, the host sockets it reaches): what its failure is read against."""
    if boundary is None or boundary.problem is not None:
        return True, (MUNGE_SOCKET,)  # no namespace: the machine's network and every socket, as in the user's shell
    return boundary.command_network, tuple(boundary.sockets)


def network_hint(kind: str, output: str, boundary: Boundary | None) -> str | None:
    """A command that failed reaching the network inside a namespace without one: say why and the fix."""
    if boundary is None or boundary.command_network or boundary.problem is not None:
        return None
    if any(word in output for word in NETWORK_WORDS):
        return (f"the {kind} command tried to reach the network, which commands do not have: make it work offline, "
                "or set [policy] command_network = true in nightshift.toml")
    return None
