"""Creating a run and starting its supervisor: detached (a per-run tmux server, or its own process session),
or in the foreground. The resolved config is frozen into the run directory at creation.
"""
from __future__ import annotations

import errno
import getpass
import json
import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

import tomli_w

from nightshift.supervisor import backends, gitguard, gitops
from nightshift.supervisor.config.schema import Config, load_config, parse_config
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.liveness import supervisor_status
from nightshift.supervisor.run.own_python import python_argv
from nightshift.supervisor.run.paths import RunPaths, new_run_id
from nightshift.supervisor.run.registry import live_runs, register
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.sandbox.boundary import boundary_for, start_problems
from nightshift.supervisor.shift.pretool_transport import pretool_transport
from nightshift.supervisor.shift.stall import claude_tool_limit
from nightshift.supervisor.verify import git_controls


class LaunchError(UserError):
    pass


def resolve_config(workspace: Path, backend: str | None = None, agent: str | None = None) -> Config:
    config = load_config(workspace)
    if backend:
        config = config.model_copy(update={"backend": config.backend.model_copy(update={"kind": backend})})
    if agent:
        config = config.model_copy(update={"agent": config.agent.model_copy(update={"kind": agent})})
    return parse_config(tomli_w.dumps(config.model_dump(exclude_none=True)))  # re-validated


def refuse_to_start(workspace: Path, config: Config):
    """Every reason a run cannot start here, as a one-line LaunchError, checked before anything is created (and
    before the preflight runs commands); returns the workspace's repository."""
    if not workspace.is_dir():
        raise LaunchError(f"workspace {workspace} does not exist; give an existing folder")
    validate_for_launch(config)
    for problem in start_problems(boundary_for(workspace, config)):  # fail closed, before anything is created
        raise LaunchError(problem)
    backends.preflight(config.backend.kind, config)  # no run is created where its backend cannot run
    repo = gitops.open_repo(workspace)
    problem = gitops.refusal(repo, workspace)
    if problem:
        raise LaunchError(problem)
    for live in live_runs(workspace):
        raise LaunchError(f"run {live['run_id']} is live in {workspace} (supervisor pid {live['pid']} on "
                          f"{live['host']}); two agents in one repository would undo each other: "
                          f"`nightshift stop {live['run_id']}` first, or use another clone")
    if not os.access(workspace, os.W_OK):
        raise LaunchError(f"cannot write in {workspace} (read-only); nightshift keeps the run's state in "
                          f"{workspace}/.nightshift and commits there: make it writable")
    return repo


def create_run(workspace: Path, config: Config, run_id: str | None = None) -> RunPaths:
    workspace = Path(workspace).resolve()
    repo = refuse_to_start(workspace, config)
    try:
        return _create(workspace, config, repo, run_id)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise LaunchError(f"cannot create the run in {workspace}: {exc.strerror} ({exc.filename})") from None
        raise LaunchError(f"cannot write in {workspace} ({exc.strerror}: {exc.filename}); nightshift keeps the "
                          f"run's state in {workspace}/.nightshift and commits there: make it writable") from None


def validate_for_launch(config: Config) -> None:
    """What would only fail inside a detached supervisor (where nobody reads it) is refused here."""
    if config.agent.kind == "claude" and config.limits.stall_after < claude_tool_limit():
        raise LaunchError(f"nightshift.toml: limits.stall_after ({config.limits.stall_after:g}s) is shorter than a "
                          f"tool call of Claude Code may run silent ({claude_tool_limit():g}s, its Bash tool's "
                          f"timeout): a long test run would be taken for a stall; set stall_after = \"15m\" or more")
    if config.agent.kind == "command" and not config.agent.command.strip():
        raise LaunchError("nightshift.toml: agent.command is empty; set the agent's command line "
                          "(e.g. command = \"codex exec --prompt-file {prompt_file}\")")


def _create(workspace: Path, config: Config, repo, run_id: str | None = None) -> RunPaths:
    gitops.exclude_state_dir(repo)
    git_controls.prepare(workspace)
    from nightshift.supervisor.shift.ground import commit_ground  # what the run's attestations rest on, in git from the start
    ground, ground_paths, ground_left = commit_ground(repo, workspace, config)
    before = gitops.worktree_state(repo)  # the user's dirty and untracked paths: never committed unless changed
    run = RunPaths.for_run(workspace, run_id or new_run_id()).create()  # an id given: the one a preview showed
    run.config.write_text(tomli_w.dumps(config.model_dump(exclude_none=True)))
    os.chmod(run.config, 0o600)
    git_controls.snapshot(workspace, git_controls.store_of(run.root))  # what the agent may never change
    fd = os.open(run.prerun, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(before, fh)
    log = EventLog(run.events)
    try:
        log.append("run.created", None, run_id=run.run_id, workspace=str(workspace), goal=config.goal,
                   agent=config.agent.kind, backend=config.backend.kind, host=socket.gethostname(),
                   user=getpass.getuser(), base=gitops.head_sha(repo),
                   pretool_hook=pretool_transport(config).kind)  # how tool calls are decided: "http" or "command"
        if ground or ground_left:
            log.append("ground.committed", None, sha=ground, paths=ground_paths, left_out=ground_left,
                       decision="what the verdicts rest on (nightshift.toml, CLAUDE.md, references) is committed as "
                                "the run begins, so an attestation of it can be checked from a clone")
        names = sorted(before)
        log.append("workspace.recorded", None, branch=gitops.branch_name(repo),
                   dirty=len(names), paths=names[:20],
                   decision="paths dirty or untracked before the run are committed only if the agent changes "
                            "them; files with conflict markers are never committed")
        not_run = gitguard.not_run(workspace)
        log.append("git.guarded", None, not_run=not_run,
                   decision="nightshift's git runs no hook, filter, diff or merge driver, fsmonitor, pager, editor, "
                            "signing or credential program; the agent cannot change .git's config, hooks or info/")
    finally:
        log.close()
    register(run, host=socket.gethostname(), created=time.time())
    return run


def finish_unsupervised(run: RunPaths, outcome: str, reason: str) -> None:
    """End a run that no supervisor is running (a submit rejected, a chain stopped while queued)."""
    from nightshift.supervisor.run.state import load_state, write_snapshot

    state = load_state(run.root)[0]
    log = EventLog(run.events, last_seq=state["seq"])
    try:
        log.append("run.finished", state["shift"] or None, outcome=outcome, reason=reason)
    finally:
        log.close()
    state, offset, _ = load_state(run.root)
    write_snapshot(run.snapshot, state, offset)


def frozen_config(run: RunPaths) -> Config:
    return parse_config(run.config.read_text(), str(run.config))


def supervise_argv(run: RunPaths) -> list[str]:
    """The supervisor's command line: -E -P, so nothing of the workspace or of PYTHON* is on its import path
    (it starts in its run directory, never in the workspace)."""
    return python_argv("nightshift.supervisor.cli.main", "supervise", str(run.root))


def start_detached(run: RunPaths, config: Config | None = None, wait: float = 10.0) -> str:
    """Start the supervisor out of this terminal's reach; returns where it runs. Raises LaunchError."""
    config = config or frozen_config(run)
    status = supervisor_status(run.supervisor)
    if status["alive"]:
        raise LaunchError(f"run {run.run_id} is already supervised (pid {status['pid']} on {status['host']})")
    before = run.supervisor.stat().st_mtime if run.supervisor.exists() else 0.0
    if config.backend.kind == "tmux":
        from nightshift.supervisor.backends.tmux import socket_for
        sock = config.backend.tmux_socket or socket_for(run.run_id)
        command = " ".join(shlex.quote(a) for a in supervise_argv(run))
        subprocess.run(["tmux", "-L", sock, "kill-session", "-t", "supervisor"], capture_output=True)
        proc = subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "supervisor", "-x", "200", "-y", "50",
                               "-c", str(run.root), command], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LaunchError(f"tmux could not start the supervisor: {proc.stderr.strip()}")
        where = f"{shlex.join(['tmux', '-L', sock, 'attach', '-t', 'supervisor'])} (its session)"
    else:
        with open(os.devnull, "wb") as null:
            subprocess.Popen(supervise_argv(run), cwd=run.root, stdout=null, stderr=null,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        where = f"a background process on {socket.gethostname()}"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if run.supervisor.exists() and run.supervisor.stat().st_mtime > before:
            started = supervisor_status(run.supervisor)
            if started["alive"] or started.get("stopped"):  # or it started and already ended (a run with one step left)
                return where
        time.sleep(0.1)
    tail = run.supervisor_log.read_text().strip().splitlines()[-1:] if run.supervisor_log.exists() else []
    raise LaunchError(f"the supervisor did not start: {tail[0] if tail else 'no output'}; see {run.supervisor_log}")


def run_foreground(run: RunPaths, say=print, leave_on_outcome: bool = False, let_go_when_held: bool = False) -> int:
    from nightshift.supervisor.shift.loop import Supervisor

    config = frozen_config(run)
    return Supervisor(run, config, say=say, leave_on_outcome=leave_on_outcome,
                      let_go_when_held=let_go_when_held).run()
