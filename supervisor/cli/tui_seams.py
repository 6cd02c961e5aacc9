"""What the face hands the TUI: its default actions, with attach replaced by the face's, which also knows runs
whose agent lives in a Slurm chain job (hpc/), something the TUI itself does not import."""
from __future__ import annotations

from supervisor.cli.attach import attach_argv


def face_seams():
    from tui.seams import Seams

    return Seams(attach_argv=attach_argv)
