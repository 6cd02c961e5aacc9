"""Where an agent's turns run: a tmux pane (login node) or a local child process, plus a registry through which
the face adds backends that live outside the core (Slurm's, from hpc/), so the core never imports them.

May import: errors, config, run.
"""
from __future__ import annotations

from typing import Any, Callable

from nightshift.supervisor.backends.base import Backend, LaunchSpec
from nightshift.supervisor.errors import UserError


class BackendUnavailable(UserError):
    """A backend was asked for that this process does not have (not registered) or cannot reach."""


# kind -> (factory(config, run) -> Backend, preflight(config) raising a UserError where it cannot run)
_REGISTERED: dict[str, tuple[Callable[[Any, Any], Backend], Callable[[Any], None] | None]] = {}
# kind -> what starts several runs' first turns together (a fleet's lanes as one Slurm job array); see job_arrays
_ARRAYS: dict[str, Any] = {}


def register_backend(kind: str, factory: Callable[[Any, Any], Backend],
                     preflight: Callable[[Any], None] | None = None, arrays: Any = None) -> None:
    _REGISTERED[kind] = (factory, preflight)
    if arrays is not None:
        _ARRAYS[kind] = arrays


def job_arrays(kind: str) -> Any:
    """The backend's way to start the first turns of several runs as one job (None where it has none). It has
    ``usable(config) -> bool``, ``submit(config, fleet_run, lane_roots, look) -> {"job_id": id} | {"wait": why} |
    {"refused": why}`` (``look``: find one submitted before a crash first) and ``offer(lane_root, fleet_root, job_id,
    task)``, which lets a lane's supervisor take its task for its first turn instead of submitting a job."""
    loader = _ARRAYS.get(kind)  # a function that imports it: registering a backend must stay cheap
    return loader() if loader is not None else None


def make_backend(kind: str, config, run) -> Backend:
    """The backend named in the config: tmux and local are built in; others come from the registry."""
    if kind == "tmux":
        from nightshift.supervisor.backends.tmux import TmuxBackend
        return TmuxBackend(socket_name=config.backend.tmux_socket or None, run_id=run.run_id)
    if kind == "local":
        from nightshift.supervisor.backends.local import LocalBackend
        return LocalBackend()
    if kind in _REGISTERED:
        return _REGISTERED[kind][0](config, run)
    raise BackendUnavailable(f"backend {kind!r} is not available in this process; use tmux or local, or start "
                             "the run with the `nightshift` command, which adds the slurm backend")


def preflight(kind: str, config) -> None:
    """Raise a one-line UserError where a run on this backend could not start (nothing is created first)."""
    if kind == "tmux":
        import shutil
        if not shutil.which("tmux"):
            raise BackendUnavailable("tmux not found; install it (apt-get install tmux) or use --backend local")
    elif kind in _REGISTERED and _REGISTERED[kind][1] is not None:
        _REGISTERED[kind][1](config)
    elif kind not in ("local", *_REGISTERED):
        raise BackendUnavailable(f"backend {kind!r} is not available in this process; use tmux or local")


__all__ = ["Backend", "BackendUnavailable", "LaunchSpec", "job_arrays", "make_backend", "preflight",
           "register_backend"]
