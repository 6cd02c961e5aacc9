"""The [judge] section of nightshift.toml: an independent model that grades the work against a rubric."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from supervisor.config_types import Duration, Section


class JudgeConfig(Section):
    enabled: bool = True
    model: str = "claude-sonnet-4-5"
    when: Literal["claim", "every"] = "claim"
    every_shifts: int = Field(1, ge=1)
    max_cost_per_verdict_usd: float = Field(0.5, ge=0)
    max_cost_usd: float = Field(5.0, ge=0)
    criteria: list[str] = Field(default_factory=list)
    timeout: Duration = 120.0
    max_diff_chars: int = Field(60_000, gt=0)
