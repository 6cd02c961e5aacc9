"""The [slurm] section of nightshift.toml: what each batch job asks for and how to reach Slurm."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

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
    modules: list[str] = Field(default_factory=list)  # `module load` in the job, before anything runs
    setup: str = ""  # a shell line run in the job first (conda/venv activation)
    env: dict[str, str] = Field(default_factory=dict)  # exported in the job (never secrets: sbatch propagates those)
    grace: Duration = 300.0
    poll_interval: Duration = 30.0
    max_job_retries: int = Field(2, ge=0)

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
