"""The sandbox measured from inside: surfaces.py's probes run in the namespace a run's boundary makes (as a command,
or as an interactive turn that keeps its terminal), one line per surface, closed or open with the reason and the
fix. ``doctor``, ``check`` and the tests all use ``survey``.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.sandbox import hardening
from nightshift.supervisor.sandbox.boundary import Boundary, surface_door
from nightshift.supervisor.sandbox.command import command_namespace
from nightshift.supervisor.run.own_python import bare_argv
from nightshift.supervisor.sandbox.turn import turn_namespace

FIXES = {
    "capabilities": "a user namespace with --cap-drop ALL: allow unprivileged user namespaces, bubblewrap >= 0.8",
    "mounts": "install libseccomp (pip install pyseccomp) and allow user namespaces",
    "abstract sockets": "keep network off, or a kernel with Landlock ABI 6 (Linux 6.12+) for its scope",
    "unix sockets": "name only the sockets a run needs in [policy] sockets; a socket bound after the turn started "
                    "outside /run/user and the host's /tmp is not covered until the next command or turn",
    "socket environment": "nightshift unsets them; report this as a bug",
    "terminals and /dev": "bubblewrap's --dev /dev (a private pty namespace)",
    "/dev/shm": "a private tmpfs on /dev/shm",
    "TIOCSTI": "install libseccomp (pip install pyseccomp); or sysctl dev.tty.legacy_tiocsti=0",
    "syscalls": "install libseccomp (pip install pyseccomp)",
    "credentials": "[policy] deny_read in nightshift.toml; take an entry back only with [policy] allow_read",
    "session": "a session of its own (--new-session) for commands and headless turns",
    "processes": "a PID namespace: bubblewrap with user namespaces (the namespace's fix in doctor); Landlock ABI 6 "
                 "(Linux 6.12+) refuses the signals",
    "host /tmp": "a private /tmp: bubblewrap with user namespaces (the namespace's fix in doctor)",
}


@dataclass(frozen=True)
class Surface:
    name: str
    closed: bool
    detail: str

    def line(self) -> str:
        if self.closed:
            return f"closed  {self.name}: {self.detail}"
        return f"OPEN    {self.name}: {self.detail}; fix: {FIXES.get(self.name, 'see the sandbox notes')}"


def plan(boundary: Boundary, session: bool) -> dict:
    """What the probes try: every host socket but the named ones, the credential places that exist, host ptys."""
    allowed = {os.path.realpath(p) for p in boundary.sockets}
    sockets = [str(p) for p in hardening.host_sockets() if os.path.realpath(p) not in allowed]
    try:
        ptys = [f"/dev/pts/{n}" for n in os.listdir("/dev/pts") if n.isdigit()]
    except OSError:
        ptys = []
    return {"sockets": sockets, "abstract": hardening.host_abstract_sockets(), "env": list(hardening.SOCKET_ENV),
            "ptys": ptys,
            "marker": f"nightshift-probe-{uuid.uuid4().hex[:12]}", "shm_device": _device("/dev/shm"),
            "session": session, "outside_pid": os.getpid(),
            "tmp_marker": f"/tmp/nightshift-probe-{uuid.uuid4().hex[:12]}",
            "credentials": [str(p) for p in boundary.deny_read if os.path.lexists(p)]}


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def inside_command(plan_file: str) -> list[str]:
    """The probes (after bwrap_argv, which scopes them as it scopes every process that shares the network)."""
    return bare_argv("nightshift.supervisor.sandbox.surfaces", plan_file)


def inside_line(plan_file: str) -> str:
    """The probes as a shell line; ``plan_file`` may name $TMPDIR (left for the shell inside to expand)."""
    argv = inside_command("PLAN")
    return shlex.join(argv[:-1]) + (f' "{plan_file}"' if plan_file.startswith("$") else " " + shlex.quote(plan_file))


def survey(boundary: Boundary, interactive: bool = False, timeout: float = 60.0,
           nested: bool = False) -> list[Surface]:
    """Run the probes inside the namespace ``boundary`` makes for a command (command_namespace: no network unless
    [policy] command_network) or, ``interactive``, for a turn that keeps its terminal (turn_namespace, as the
    wrapper starts it; ``nested``: with Claude Code's own sandbox inside, [policy] claude_sandbox). Where no
    namespace can be made, every surface is open for that reason."""
    if boundary.problem is not None and not boundary.tier.confined:
        return [Surface(name, False, f"no namespace ({boundary.problem})") for name in FIXES
                if name != "session"]
    todo = plan(boundary, session=not interactive)
    marker = Path(todo["tmp_marker"])
    marker.touch(mode=0o644)  # in the host's /tmp: seen inside, the host's /tmp is shared
    try:
        if interactive:
            return _in_turn(boundary, todo, timeout, nested)
        # the plan's place: the private /tmp inside a namespace; without one, the private TMPDIR (the launcher's)
        where = "/tmp/plan.json" if boundary.problem is None else "$TMPDIR/plan.json"
        with command_namespace(boundary, "probe", inside_line(where)) as run:
            (run.tmp / "plan.json").write_text(json.dumps(todo))
            # as every caller starts a command: a session of its own
            done = subprocess.run(run.argv, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        return _found(done, todo)
    finally:
        marker.unlink(missing_ok=True)


def _in_turn(boundary: Boundary, todo: dict, timeout: float, nested: bool) -> list[Surface]:
    """The probes in an interactive turn's own namespace, under a throwaway run folder (a name no turn has)."""
    folder = Path(tempfile.mkdtemp(prefix="probe-run-", dir=boundary.scratch()))
    name = f"p{uuid.uuid4().hex[:8]}t1"  # a turn's name ends in t<number>; hex has no t
    try:
        ns = turn_namespace(boundary, RunPaths(folder), 1, name, [], interactive=True, nested=nested)
        (ns.tmp / "plan.json").write_text(json.dumps(todo))
        # as the wrapper starts an interactive turn: in the pane's session
        where = "/tmp/plan.json" if boundary.problem is None else str(ns.tmp / "plan.json")
        done = subprocess.run(ns.argv + inside_command(where), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        return _found(done, todo)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(boundary.scratch() / name, ignore_errors=True)
        (boundary.scratch() / f"{name}.confine.json").unlink(missing_ok=True)


def _found(done: subprocess.CompletedProcess, todo: dict) -> list[Surface]:
    found = []
    for raw in done.stdout.splitlines():
        try:
            item = json.loads(raw)
            found.append(Surface(item["surface"], bool(item["closed"]), str(item["detail"])))
        except (ValueError, KeyError, TypeError):
            continue
    if not found:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return [Surface("probe", False, f"the probe did not run inside the namespace: {why}")]
    return [_shm_outside(s, todo["marker"]) if s.name == "/dev/shm" else s for s in found]


def _shm_outside(surface: Surface, marker: str) -> Surface:
    """The marker written inside must not be in the host's /dev/shm once the namespace ended."""
    host = Path("/dev/shm") / marker
    if host.exists():
        host.unlink(missing_ok=True)
        return Surface(surface.name, False, "a file written inside is in the host's /dev/shm after the process ended")
    if not surface.closed:  # the host's own /dev/shm (no namespace): what is written there stays
        return surface
    return Surface(surface.name, True, surface.detail + "; gone when the process ended, never in the host's")


def _line(boundary: Boundary, surface: Surface) -> str:
    """The surface's line; an open one that a missing part leaves open names that part's door (whether a run may go
    without it is start_problems' decision, not this line's)."""
    door = None if surface.closed else surface_door(boundary, surface.name)
    return surface.line() + (f" (left open by the missing {door} part)" if door else "")


def survey_lines(boundary: Boundary, nested: bool = False) -> list[str]:
    """``doctor``/``check``: a line per surface for a command (as a headless turn) and for an interactive turn; one
    line where no namespace can be made (every surface is open for that one reason, whose text says the fix). The
    parts the machine lacks are the callers' lines (Boundary.missing), not repeated here."""
    if boundary.problem is not None and not boundary.tier.confined:
        return [f"OPEN    every surface: no namespace ({boundary.problem})"]
    lines = [_line(boundary, s) for s in survey(boundary)]
    lines += [f"{_line(boundary, s)} (interactive turn)" for s in survey(boundary, interactive=True, nested=nested)
              if s.name in ("TIOCSTI", "terminals and /dev", "abstract sockets", "unix sockets")]
    return lines
