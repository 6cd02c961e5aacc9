"""The [oracle] section of nightshift.toml: the command that makes candidate outputs and the comparisons."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from supervisor.config_types import Duration, Section


class CompareConfig(Section):
    name: str
    candidate: str
    reference: str
    x: str | int | None = None
    columns: list[str | int] = Field(default_factory=list)
    rtol: float = Field(1e-3, ge=0)
    atol: float = Field(0.0, ge=0)
    range: tuple[float, float] | None = None
    interpolate: Literal["none", "linear", "loglog"] = "none"
    heldout: bool = False


class OracleConfig(Section):
    command: str = ""
    timeout: Duration = 1800.0
    compare: list[CompareConfig] = Field(default_factory=list)
