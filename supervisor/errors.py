"""Which exceptions are a user's to act on (printed as one line by the CLI) rather than bugs."""
from __future__ import annotations


def is_user_error(exc: BaseException) -> bool:
    from hpc.errors import SlurmError
    from supervisor.agents.command import CommandTemplateError
    from supervisor.backends.tmux import TmuxMissing
    from supervisor.config import ConfigError
    from supervisor.events import EventLogError
    from supervisor.gitops import GitError
    from supervisor.init import InitError
    from supervisor.launcher import LaunchError
    from supervisor.registry import RunNotFound
    from supervisor.runtime import AlreadySupervised

    known = (ConfigError, EventLogError, GitError, InitError, LaunchError, RunNotFound, AlreadySupervised,
             TmuxMissing, CommandTemplateError, SlurmError, UserError)
    return isinstance(exc, known)


class UserError(Exception):
    """A generic one-line error for a user to act on."""
