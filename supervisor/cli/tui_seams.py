"""What the face hands the TUI: its default actions, with attach replaced by the face's, which also knows runs
whose agent lives in a Slurm chain job (hpc/), and submitting a workspace to Slurm (hpc/submit.py): things the
TUI itself does not import."""
from __future__ import annotations

from pathlib import Path

from supervisor.cli.attach import attach_argv
from supervisor.errors import is_user_error


def _as_action_error(fn):
    """A user's error (sbatch's refusal, a bad nightshift.toml) becomes the TUI's one-line ActionError, verbatim."""
    def call(*args):
        from tui.seams import ActionError

        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - only users' errors are turned; a bug still surfaces
            if is_user_error(exc):
                raise ActionError(str(exc)) from None
            raise
    return call


def plan_submit(workspace: Path):
    from hpc.submit import plan_submit as plan

    return plan(workspace)


def submit_plan(plan) -> tuple[str, int]:
    from hpc.submit import submit_plan as send

    return send(plan)


def face_seams():
    from tui.seams import Seams

    return Seams(attach_argv=attach_argv, plan_submit=_as_action_error(plan_submit),
                 submit_plan=_as_action_error(submit_plan))
