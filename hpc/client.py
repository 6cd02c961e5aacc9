"""The choice between the two Slurm clients: pyslurm where it is importable and built for this cluster's Slurm,
the sbatch/squeue/sacct/scontrol CLI otherwise (both implement hpc.interface.SlurmClient)."""
from __future__ import annotations

from nightshift.hpc.cli_client import CliClient
from nightshift.hpc.errors import SlurmMissing
from nightshift.hpc.interface import Backoff, SlurmClient
from nightshift.hpc.pyslurm_client import PyslurmClient, pyslurm_problem


def make_client(kind: str = "auto", backoff: Backoff = Backoff()) -> SlurmClient:
    """``auto``: pyslurm when importable and built for this cluster's Slurm, else the CLI."""
    if kind == "cli":
        return CliClient(backoff=backoff)
    if kind == "pyslurm":
        problem = pyslurm_problem()
        if problem:
            raise SlurmMissing(f"[slurm] client = \"pyslurm\" but {problem}; set client = \"cli\" or \"auto\"")
        return PyslurmClient(backoff=backoff)
    if kind == "auto":
        return CliClient(backoff=backoff) if pyslurm_problem() else PyslurmClient(backoff=backoff)
    raise SlurmMissing(f"unknown [slurm] client {kind!r}; use \"auto\", \"cli\" or \"pyslurm\"")
