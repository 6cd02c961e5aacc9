"""The errors of the Slurm layer, each a one-line message a user (or the supervisor) can act on."""
from __future__ import annotations
from nightshift.supervisor.errors import UserError


class SlurmError(UserError):
    """Base of every error raised by hpc/."""


class SlurmMissing(SlurmError):
    """No Slurm client commands (or no matching pyslurm) on this machine."""


class SubmitRejected(SlurmError):
    """sbatch (or the controller) refused the job; the message is Slurm's own, verbatim."""


class ControllerUnavailable(SlurmError):
    """slurmctld did not answer after retries with backoff; the supervisor waits and tries again later."""


class SlurmCommandFailed(SlurmError):
    """A Slurm command failed for another reason (its message is kept verbatim)."""
