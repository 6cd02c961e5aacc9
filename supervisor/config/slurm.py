"""The [slurm] section of nightshift.toml: what each batch job asks for and how to reach Slurm."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from nightshift.supervisor.config.types import Duration, Section


class SlurmConfig(Section):
    client: Literal["auto", "cli", "pyslurm"] = "auto"
    """How Slurm is reached: "cli" (sbatch, squeue, sacct, scontrol), "pyslurm", or "auto" (pyslurm where it matches
    the cluster)."""
    partition: str = ""
    """#SBATCH --partition."""
    account: str = ""
    """#SBATCH --account."""
    qos: str = ""
    """#SBATCH --qos."""
    time: str = "1:00:00"
    """#SBATCH --time of each job (the walltime)."""
    cpus: int = Field(1, ge=1)
    """#SBATCH --cpus-per-task."""
    memory: str = ""
    """#SBATCH --mem, e.g. "16G"."""
    gres: str = ""
    """#SBATCH --gres, e.g. "gpu:1"."""
    extra: list[str] = Field(default_factory=list)
    """More "#SBATCH ..." lines, written as given."""
    modules: list[str] = Field(default_factory=list)
    """`module load` these in every job, before anything runs."""
    setup: str = ""
    """A shell line run first in every job (e.g. `source ~/venvs/x/bin/activate`)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables exported in every job, e.g. { OMP_NUM_THREADS = "8" }; never secrets (export them in your shell:
    sbatch passes them on)."""
    grace: Duration = 300.0
    """Before the walltime, this long for the agent to write its notes and commit (--signal=B:USR1@grace)."""
    poll_interval: Duration = 30.0
    """How often the supervisor asks Slurm about the run's jobs (one batched query)."""
    max_job_retries: int = Field(2, ge=0)
    """A job that fails (node failure, the script failing before the agent started) is submitted again up to this
    many times."""

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        for name in env:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not a shell variable name (letters, digits and _)")
            if re.search(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", name, re.I):
                raise ValueError(f"{name} looks like a secret: export it in your shell instead (sbatch passes it "
                                 "to the job), so it is never written into a file")
        return env
