"""The [slurm] section of nightshift.toml: what each batch job asks for and how to reach Slurm."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from supervisor.config.types import Duration, Section


class SlurmConfig(Section):
    client: Literal["auto", "cli", "pyslurm"] = "auto"
    partition: str = ""
    account: str = ""
    qos: str = ""
    time: str = "1:00:00"
    cpus: int = Field(1, ge=1)
    memory: str = ""
    gres: str = ""
    extra: list[str] = Field(default_factory=list)  # extra "#SBATCH ..." lines, written as given
    modules: list[str] = Field(default_factory=list)
    setup: str = ""
    grace: Duration = 300.0
    poll_interval: Duration = 30.0
    max_job_retries: int = Field(2, ge=0)
