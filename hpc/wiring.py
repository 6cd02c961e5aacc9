"""How Slurm joins the core: the face (and a chain job, which runs a supervisor itself) calls ``register()``,
which adds the slurm backend and its preflight to ``nightshift.supervisor.backends``. Nothing of hpc/ is imported until a
run asks for Slurm, so every other verb starts as fast as before.
"""
from __future__ import annotations


def register() -> None:
    from nightshift.supervisor.backends import register_backend

    register_backend("slurm", _slurm_backend, _slurm_preflight, arrays=_job_arrays)


def _job_arrays():
    from nightshift.hpc import array  # only when a fleet asks: it loads the Slurm config schema (pydantic)

    return array


def _slurm_backend(config, run):
    from nightshift.hpc.backend import SlurmBackend

    return SlurmBackend(config=config, run=run)


def _slurm_preflight(config) -> None:
    """Raises SlurmMissing (one line) where no Slurm client can be made: no run is created then."""
    from nightshift.hpc.client import make_client

    make_client(config.slurm.client)
