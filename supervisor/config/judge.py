"""The [judge] section of nightshift.toml: an independent model that grades the work against a rubric."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, field_validator

from supervisor.config.types import Duration, Section


# What a run without a judge cannot see: said by init, check and the report alike.
NO_JUDGE = ("only the oracle and the tests check the work, so a constant tuned to the references or a test rewritten "
            "to pass goes unseen")


class JudgeConfig(Section):
    enabled: bool = True
    # "api": the Anthropic SDK with ANTHROPIC_API_KEY; "agent": the claude CLI in a fresh tool-less session (a
    # subscription login is enough); "auto": the API when a key is in the environment, else the CLI.
    via: Literal["api", "agent", "auto"] = "auto"
    cli: str = "claude"  # the CLI "agent" runs
    model: str = "claude-sonnet-4-6"  # 4-5 reaches end-of-life on 2026-11-30
    when: Literal["claim", "every"] = "claim"
    every_shifts: int = Field(1, ge=1)
    max_cost_per_verdict_usd: float = Field(0.5, ge=0)
    max_cost_usd: float = Field(5.0, ge=0)
    criteria: list[str] = Field(default_factory=list)
    timeout: Duration = 120.0
    max_diff_chars: int = Field(60_000, gt=0)
    max_output_tokens: int = Field(4096, ge=256)  # the answer's cap; lowered further to fit the cost caps
    max_retries: int = Field(2, ge=0)  # SDK retries of 429/529/5xx/timeouts (with backoff) before "unavailable"
    # (input, output) USD per million tokens, for a model whose price nightshift does not know
    price_usd_per_mtok: tuple[NonNegativeFloat, NonNegativeFloat] | None = None
    integrity_checks: bool = True  # also grade magic constants, loosened tolerances, edited tests, dropped plan items
    # A judge that is down (overloaded, timing out, answering malformed) is asked again with backoff for this long;
    # then the run is held for a person. Never a pass: the user asked for a second opinion.
    max_wait: Duration = 3600.0

    @field_validator("max_wait")
    @classmethod
    def _some_wait(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be longer than 0: it is how long a judge that is down is asked again before the "
                             "run is held for a person; write e.g. \"30m\" (or set [judge] enabled = false)")
        return value
