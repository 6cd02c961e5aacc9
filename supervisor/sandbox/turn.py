"""An agent turn's namespace, as lines of the turn's wrapper script (supervisor/backends/base.py): every backend
(tmux pane, local process, Slurm job) runs the same wrapper, so every agent (Claude Code interactive or headless, a
command agent, Codex) runs inside it the same way. The wrapper itself stays outside: it marks the turn started and
records its exit, so the supervisor learns how a turn ended whoever ran it.

Inside: the workspace and a private TMPDIR are writable, and so are the agent's own state (Claude Code's config)
and the run's few hook paths (stops/, refusals/, waits/, the shift's folder for claims); the rest of the run
directory, the references, passed tests and nightshift.toml are read-only; held-out data and the private stores do
not exist. With ``[policy] network = false`` the only way out is the model's API, through a proxy nightshift runs
outside and reaches by a unix socket bound in. Processes left running when the agent's command ends are written
to the turn's ``leftovers`` file (and end with the namespace).
"""
from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.sandbox.command import SCAN
from nightshift.supervisor.run.own_python import bare_argv
from nightshift.supervisor.sandbox.confinement import confine_argv
from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

API_PORT = 8119  # inside the namespace's own loopback: no other process of the machine is there
HOOK_PORT = 8120  # the decision helper's HTTP door there (network off; with network on it is an ephemeral port)
HOOK_FOLDERS = ("stops", "refusals", "waits")


def python_line(module: str, *args: str) -> str:
    """own_python.bare_argv as a line of the wrapper script."""
    return shlex.join(bare_argv(module, *args))


@dataclass
class TurnNamespace:
    argv: list[str]  # bwrap ... -- (empty: the turn runs without a namespace)
    tmp: Path | None = None
    leftovers: Path | None = None
    prologue: str = ""  # wrapper lines before the namespace starts (outside)
    inside: str = ""  # lines run inside before the agent's command
    epilogue: str = ""  # wrapper lines after it ended (outside)
    notes: list[str] = field(default_factory=list)


def turn_namespace(boundary: Boundary, run: RunPaths, shift: int, name: str, agent_state: list[Path],
                   protected: list[Path] = (), decisions: bool = False,
                   http_settings: Path | None = None, interactive: bool = False,
                   nested: bool = False) -> TurnNamespace:
    """``name``: the turn's deterministic name (s3t1); ``agent_state``: what the agent's own CLI writes outside the
    workspace (checked to exist by the caller); ``protected``: passed tests' files, read-only; ``decisions``: run
    the PreToolUse decision helper beside the turn (an agent with that hook: Claude Code); ``http_settings``: the
    agent's settings file whose HTTP hook the helper serves (and points at itself); ``interactive``: the agent reads
    its terminal (a tmux pane): it keeps it (no session of its own; the seccomp filter refuses TIOCSTI there);
    ``nested``: Claude Code's own sandbox runs inside ([policy] claude_sandbox): it may make its namespaces."""
    problem = boundary.problem
    tier = boundary.tier
    if problem is not None and not tier.confined:
        return TurnNamespace([], notes=[f"the agent's turn runs without a namespace ({problem})"])
    tmp = boundary.scratch() / name
    tmp.mkdir(exist_ok=True, mode=0o700)
    shift_dir = run.shift_dir(shift)
    hooks = [run.root / f for f in HOOK_FOLDERS]
    for folder in [shift_dir, *hooks]:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    ns = Namespace(workspace=boundary.workspace, tmp=tmp, hidden=list(boundary.hidden),
                   read_only=list(boundary.references) + list(boundary.links) + list(boundary.read_only)
                   + list(protected),
                   writable=[*agent_state, *boundary.agent_state, *hooks, shift_dir],
                   network=boundary.network, written=frozenset({boundary.workspace}), empty=_empty(tmp),
                   new_session=not interactive, deny_read=boundary.deny_read, sockets=boundary.sockets,
                   own_sockets=(tmp.parent,), nested=nested)  # the run's scratch: the turn's proxy and decision helper
    problems = run.turn_file(shift, int(name.rsplit("t", 1)[1]), "pretool-problems")
    helper = decisions and (http_settings is not None or shutil.which("socat"))
    if problem is not None:  # no namespace: the launcher's Landlock and seccomp; the machine's network and PIDs
        out = TurnNamespace(confine_argv(ns, tier, tmp.parent / f"{name}.confine.json", boundary.outputs), tmp,
                            notes=[f"the agent's turn runs without a namespace ({problem}), held by {tier.label()}"])
        if helper:
            _decision_helper(out, tmp.parent / f"{name}.hook", http_settings, True, problems, bound=False)
        return out
    out = TurnNamespace(bwrap_argv(ns), tmp, run.turn_file(shift, int(name.rsplit("t", 1)[1]), "leftovers"))
    if helper:
        _decision_helper(out, tmp.parent / f"{name}.hook", http_settings, boundary.network, problems)
    if not boundary.network:
        socket = tmp / ".api.sock"
        # Added to the decision helper's lines (an assignment here once dropped them: the helper never ran).
        out.prologue += (f"{python_line('nightshift.supervisor.sandbox.proxy', 'outside', str(socket))} &\nns_proxy=$!\n")
        out.inside += (f"{python_line('nightshift.supervisor.sandbox.proxy', 'inside', '/tmp/.api.sock', str(API_PORT))} &\n"
                      "helpers=\"$helpers $!\"\n"
                      "for i in $(seq 200); do [ -e /tmp/.api.ready ] && break; sleep 0.05; done\n"
                      'case "${ANTHROPIC_BASE_URL:-}" in\n'
                      f'  http://*) export ANTHROPIC_BASE_URL=http://127.0.0.1:{API_PORT} ;;\n'
                      f'  *) export HTTPS_PROXY=http://127.0.0.1:{API_PORT} https_proxy=http://127.0.0.1:{API_PORT} ;;\n'
                      'esac\n')
        out.epilogue += "kill $ns_proxy 2>/dev/null\n"
    return out


def _decision_helper(out: TurnNamespace, folder: Path, http_settings: Path | None, network: bool,
                     problems: Path, bound: bool = True) -> None:
    """The resident PreToolUse helper (shift/pretool_server.py), outside; its socket's folder read-only inside at
    /tmp/.pretool (the agent can neither replace the socket nor end the helper). The agent starts only once the
    socket is there; where it never comes, the hook decides alone (the variable stays unset) or, over HTTP, every
    call is refused (the settings keep their placeholder URL). With HTTP and the network off, the helper's door is
    opened inside on the namespace's own loopback and handed to it (shift/pretool_door.py). What went wrong with
    the helper (its door, its end mid-turn) is written to ``problems`` for the supervisor's events. ``bound``: a
    namespace binds the folder in; without one (the launcher) the agent reaches it where it is (not writable)."""
    folder.mkdir(exist_ok=True, mode=0o700)
    sock = folder / "s"
    for stale in ("s", "d", "pid", "lost"):
        (folder / stale).unlink(missing_ok=True)
    inside = "/tmp/.pretool" if bound else str(folder)
    if bound:
        end = out.argv.index("--")  # bwrap's last option (the Landlock launcher may follow it)
        out.argv[end:end] = ["--ro-bind", str(folder), "/tmp/.pretool"]
    args = [str(sock)]
    door = ""
    report = shlex.quote(str(problems))
    if http_settings is not None:
        args += ["--http", "host" if network else f"door:{HOOK_PORT}", "--settings", str(http_settings)]
        if not network:
            why = "the decision helper's door could not open in the namespace: tool calls were refused this turn"
            door = (f"{python_line('nightshift.supervisor.shift.pretool_door', inside + '/d', str(HOOK_PORT))} || "
                    f"echo {shlex.quote(why)} >> {report}\n")
    out.prologue += (f"{python_line('nightshift.supervisor.shift.pretool_server', *args)} &\nns_pretool=$!\n"
                     f"for i in $(seq 500); do [ -S {shlex.quote(str(sock))} ] && break; sleep 0.02; done\n")
    sock_inside = shlex.quote(inside + "/s")
    out.inside = (f"[ -S {sock_inside} ] && export NIGHTSHIFT_PRETOOL_SOCKET={sock_inside}\n" + door
                  + out.inside)
    lost = "the decision helper ended before the turn did: tool calls after that were refused (fail closed)"
    told = shlex.quote(str(folder / "lost"))  # the supervisor saw it at a stop and said so already
    out.epilogue += (f"kill -0 $ns_pretool 2>/dev/null || [ -e {told} ] || echo {shlex.quote(lost)} >> {report}\n"
                     "kill $ns_pretool 2>/dev/null\n")


def _empty(tmp: Path) -> Path:
    """An empty file that stands for a hidden file inside the workspace (outside /tmp's view: the TMPDIR's parent)."""
    empty = tmp.parent / ".empty"
    if not empty.exists():
        empty.write_bytes(b"")
    return empty


def inner_script(ns: TurnNamespace, command: str) -> str:
    """The script bwrap runs: helpers, the agent's command, then the processes it left (the helpers excepted)."""
    scan = SCAN.replace('then echo "$n $c"', 'then case " $helpers " in *" $n "*) ;; *) echo "$n $c" ;; esac')
    # without a PID namespace (the launcher's tiers) /proc lists the machine's processes: nothing to scan
    scan_line = f"{scan} > {shlex.quote(str(ns.leftovers))}\n" if ns.leftovers is not None else ""
    return ("#!/usr/bin/env bash\n" + "helpers=\"\"\n" + ns.inside + f"(\n{command}\n)\nstatus=$?\n"
            + f"{scan_line}exit $status\n")
