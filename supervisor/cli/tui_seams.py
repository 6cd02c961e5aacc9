"""What the face hands the TUI: its default actions, with attach replaced by the face's, which also knows runs
whose agent lives in a Slurm chain job (hpc/), and submitting a workspace to Slurm (hpc/submit.py): things the
TUI itself does not import; the preflight, which the start-run form shows before it starts a run (the run then
records it, as `nightshift run` does); and the report."""
from __future__ import annotations

from pathlib import Path

from nightshift.supervisor.cli.watch.attach import attach_argv
from nightshift.supervisor.errors import is_user_error


def _as_action_error(fn):
    """A user's error (sbatch's refusal, a bad nightshift.toml) becomes the TUI's one-line ActionError, verbatim."""
    def call(*args):
        from nightshift.tui.seams import ActionError

        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - only users' errors are turned; a bug still surfaces
            if is_user_error(exc):
                raise ActionError(str(exc)) from None
            raise
    return call


def plan_submit(workspace: Path):
    from nightshift.hpc.submit import plan_submit as plan

    return plan(workspace)


def submit_plan(plan) -> tuple[str, int]:
    from nightshift.hpc.submit import submit_plan as send

    return send(plan)


def preflight(path: str):
    from nightshift.supervisor.cli.preflight.screen import run_preflight
    from nightshift.supervisor.run.paths import make_private_dir, workspace_state_dir
    from nightshift.tui.seams import Checked

    workspace = Path(path).expanduser().resolve()
    found = run_preflight(workspace, out_dir=make_private_dir(workspace_state_dir(workspace)) / "preflight")
    return Checked(passed=not found.failed, text=found.render(), found=found)


def start_run(workspace: Path, checked=None):
    """The TUI's default start, with the preflight it showed recorded in the new run's log."""
    from nightshift.supervisor.cli.preflight.check import record_preflight
    from nightshift.supervisor.errors import is_user_error
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, start_detached
    from nightshift.tui.seams import ActionError, start_run as unchecked

    if checked is None:
        return unchecked(workspace)
    workspace = Path(workspace).expanduser().resolve()
    try:
        config = resolve_config(workspace)
        run = create_run(workspace, config)
        record_preflight(run, checked.found, say=lambda _: None)
        return run, start_detached(run, config)
    except Exception as exc:  # noqa: BLE001 - a user's error becomes a notice; a bug still surfaces
        if is_user_error(exc):
            raise ActionError(str(exc)) from None
        raise


def report(run):
    """The morning report of ``run`` (`nightshift report`), written where `nightshift report` writes by default."""
    from nightshift.supervisor.cli.report.verb import build_report
    return build_report(run.root)[0]


def stop(run):
    """The TUI's stop key: `nightshift stop`'s own code (a submitted chain's queued jobs cancelled first), its
    outcome as the TUI's acknowledgement."""
    from nightshift.supervisor.cli.watch.stop import stop_run
    from nightshift.tui.seams import Ack, ActionError

    try:
        stopped = stop_run(run, wait=5.0)
    except Exception as exc:  # noqa: BLE001 - a user's error (already finished, Slurm away) is a notice
        if is_user_error(exc):
            raise ActionError(str(exc)) from None
        raise
    return Ack("stop", stopped.accepted, "; ".join(stopped.lines) if stopped.accepted is not False
               else stopped.reason)


def face_seams():
    from nightshift.tui.seams import Seams

    return Seams(attach_argv=attach_argv, preflight=preflight, start_run=start_run, report=report, stop=stop,
                 plan_submit=_as_action_error(plan_submit), submit_plan=_as_action_error(submit_plan))
