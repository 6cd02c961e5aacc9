"""What the face hands the TUI: its default actions, with attach replaced by the face's, which also knows runs
whose agent lives in a Slurm chain job (hpc/), something the TUI itself does not import; and the report."""
from __future__ import annotations

from supervisor.cli.attach import attach_argv


def report(run):
    """The morning report of ``run`` (`nightshift report`), written to <run dir>/report.html."""
    from supervisor.cli.report import build_report
    return build_report(run.root)[0]


def face_seams():
    from tui.seams import Seams

    return Seams(attach_argv=attach_argv, report=report)
