"""How Slurm joins the core: the face (and a chain job, which runs a supervisor itself) calls ``register()``,
which adds the slurm backend and its preflight to ``supervisor.backends``. Nothing of hpc/ is imported until a
run asks for Slurm, so every other verb starts as fast as before.
"""
from __future__ import annotations


def register() -> None:
    from supervisor.backends import register_backend

    from hpc import array

    register_backend("slurm", _slurm_backend, _slurm_preflight, arrays=array)


def _slurm_backend(config, run):
    from hpc.backend import SlurmBackend

    return SlurmBackend(config=config, run=run)


def _slurm_preflight(config) -> None:
    """Raises SlurmMissing (one line) where no Slurm client can be made: no run is created then."""
    from hpc.client import make_client

    make_client(config.slurm.client)
