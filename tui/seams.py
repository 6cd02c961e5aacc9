"""The TUI's only ways to act on the world: commands into a run's inbox, starting a run, attaching a pane,
writing a run's report.

Every action of the TUI goes through here, so it is plain which writes the TUI can make (inbox commands, and
the run a user explicitly starts) and so tests can replace ``starter`` or ``attacher`` with a recorder. The
defaults use the core alone; the face (`nightshift tui`) hands in versions that know what it wires in, such as
attaching through srun to a run whose agent lives in a Slurm chain job. The real functions are imported when
first used: the TUI opens even where a part of the supervisor is missing.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from nightshift.supervisor.run.paths import RunPaths


class ActionError(Exception):
    """A one-line reason an action could not be done, for a notice."""


@dataclass
class Ack:
    verb: str
    accepted: bool | None  # None: no answer within the wait (is the supervisor running?)
    reason: str = ""


def send(run: RunPaths, verb: str, wait: float = 5.0, **args: Any) -> Ack:
    """Queue ``verb`` in the run's inbox and wait for the supervisor's answer (in a worker thread)."""
    from nightshift.supervisor.run.inbox import send_command, wait_ack

    if not run.inbox.is_dir():
        raise ActionError(f"run {run.run_id} has no inbox ({run.inbox}); is the run directory complete?")
    try:
        cmd_id, offset = send_command(run, verb, **args)
    except OSError as exc:
        raise ActionError(f"could not write the {verb} command to {run.inbox}: {exc.strerror}") from None
    event = wait_ack(run, cmd_id, offset, timeout=wait)
    if event is None:
        return Ack(verb, None)
    data = event.get("data") or {}
    return Ack(verb, event["type"] == "command.accepted", str(data.get("reason") or ""))


def stop(run: RunPaths) -> Ack:
    """Stop through the inbox alone; the face hands in `nightshift stop`'s own path (supervisor/cli/watch/stop.py),
    which also cancels a submitted chain's queued jobs."""
    return send(run, "stop")


def start_run(workspace: Path) -> tuple[RunPaths, str]:
    """Create a run in ``workspace`` (it needs a nightshift.toml) and start its supervisor detached."""
    workspace = Path(workspace).expanduser().resolve()
    if not workspace.is_dir():
        raise ActionError(f"workspace {workspace} does not exist; give an existing folder")
    if not (workspace / "nightshift.toml").is_file():
        init = shlex.join(["nightshift", "init", str(workspace)])  # a path with spaces or quotes pastes as one word
        raise ActionError(f"{workspace} has no nightshift.toml; run `{init}` first")
    try:
        from nightshift.supervisor.errors import is_user_error
        from nightshift.supervisor.shift.launcher import create_run, resolve_config, start_detached
    except ImportError as exc:
        raise ActionError(f"starting runs is not available in this install ({exc})") from None
    try:
        config = resolve_config(workspace)
        run = create_run(workspace, config)
        where = start_detached(run, config)
    except Exception as exc:  # noqa: BLE001 - a user's error becomes a notice; a bug still surfaces
        if is_user_error(exc):
            raise ActionError(str(exc)) from None
        raise
    return run, where


def attach_argv(run: RunPaths) -> list[str] | None:
    try:
        from nightshift.supervisor.backends.attach import attach_argv as real
    except ImportError:
        return None
    return real(run)


def make_report(run: RunPaths) -> Path:
    """The face hands in the real one (the report is drawn by the face: `nightshift report`)."""
    raise ActionError(f"the report is written by the face: run `nightshift report {run.run_id}` "
                      "(or open this TUI with `nightshift tui`)")


@dataclass
class Checked:
    """The preflight's result as the start-run form shows it; ``found`` is handed back to ``start_run``."""

    passed: bool
    text: str  # the preflight's screen, one line per check
    found: Any = None


def no_slurm(*_args: Any) -> Any:
    raise ActionError("submitting to Slurm is wired in by `nightshift tui`; open the TUI that way")


@dataclass
class Seams:
    """What the app calls to act; tests swap a field for a recorder without touching the rest."""

    send: Callable[..., Ack] = send
    stop: Callable[[RunPaths], Ack] = stop  # the stop key: one path with `nightshift stop` (the face's)
    start_run: Callable[..., tuple[RunPaths, str]] = start_run  # (workspace[, checked]) -> (run, where)
    attach_argv: Callable[[RunPaths], list[str] | None] = attach_argv
    preflight: Callable[[str], Checked] | None = None  # the face's `nightshift check`; None: start unchecked
    report: Callable[[RunPaths], Path] = make_report  # writes the run's HTML report, returns its path
    # Submitting a run to Slurm (the face hands in hpc's): a plan to show (its .settings, .script, .run_id),
    # then the plan sent -> (run id, job id). Both raise ActionError with Slurm's words.
    plan_submit: Callable[[Path], Any] = no_slurm
    submit_plan: Callable[[Any], tuple[str, int]] = no_slurm
