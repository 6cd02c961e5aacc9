"""Where an agent's turns run: a tmux pane (login node), a local child process, or a Slurm job (hpc/)."""
from __future__ import annotations

from supervisor.backends.base import Backend, LaunchSpec


def make_backend(kind: str, config, run) -> Backend:
    """The backend named in the config; slurm lives in hpc/ and is imported only when asked for."""
    if kind == "tmux":
        from supervisor.backends.tmux import TmuxBackend
        return TmuxBackend(socket_name=config.backend.tmux_socket or None, run_id=run.run_id)
    if kind == "local":
        from supervisor.backends.local import LocalBackend
        return LocalBackend()
    if kind == "slurm":
        from hpc.backend import SlurmBackend
        return SlurmBackend(config=config, run=run)
    raise ValueError(f"unknown backend {kind!r}; use tmux, local or slurm")


__all__ = ["Backend", "LaunchSpec", "make_backend"]
