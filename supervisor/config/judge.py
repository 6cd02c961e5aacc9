"""The [judge] section of nightshift.toml: an independent model that grades the work against a rubric."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, field_validator

from nightshift.supervisor.config.types import Duration, Section


# What a run without a judge cannot see: said by init, check and the report alike.
NO_JUDGE = ("only the oracle and the tests check the work, so a constant tuned to the references or a test rewritten "
            "to pass goes unseen")


class JudgeConfig(Section):
    enabled: bool = True
    """Run the judge (with a [judge] table present); false turns it off."""
    # "api": the Anthropic SDK with ANTHROPIC_API_KEY; "agent": the claude CLI in a fresh tool-less session (a
    # subscription login is enough); "auto": the API when a key is in the environment, else the CLI.
    via: Literal["api", "agent", "auto"] = "auto"
    """"api": the Anthropic SDK with ANTHROPIC_API_KEY; "agent": the claude CLI in a fresh tool-less session (a login
    is enough); "auto": the API when a key is set, else the CLI."""
    cli: str = "claude"
    """The CLI that via = "agent" runs."""
    model: str = "claude-sonnet-4-6"
    """The judge's model."""
    when: Literal["claim", "every"] = "claim"
    """"claim": judge claims of done; "every": every verdict (every every_shifts shifts)."""
    every_shifts: int = Field(1, ge=1)
    """With when = "every": judge every this many shifts."""
    max_cost_per_verdict_usd: float = Field(0.5, ge=0)
    """The most one judgement may cost (the answer's length is capped to fit)."""
    max_cost_usd: float = Field(5.0, ge=0)
    """The most the judge may cost over the run."""
    criteria: list[str] = Field(default_factory=list)
    """More rubric criteria for the judge, in words."""
    timeout: Duration = 120.0
    """The longest one judgement may take."""
    max_diff_chars: int = Field(60_000, gt=0)
    """The diff shown to the judge is cut to this many characters."""
    max_output_tokens: int = Field(4096, ge=256)
    """The judge's answer's cap in tokens; lowered further to fit the cost caps."""
    max_retries: int = Field(2, ge=0)
    """SDK retries of 429/529/5xx/timeouts (with backoff) before the judge is "unavailable"."""
    # (input, output) USD per million tokens, for a model whose price nightshift does not know
    price_usd_per_mtok: tuple[NonNegativeFloat, NonNegativeFloat] | None = None
    """[input, output] USD per million tokens, for a model whose price nightshift does not know."""
    integrity_checks: bool = True
    """Also grade magic constants, loosened tolerances, edited tests and dropped plan items."""
    # A judge that is down (overloaded, timing out, answering malformed) is asked again with backoff for this long;
    # then the run is held for a person. Never a pass: the user asked for a second opinion.
    max_wait: Duration = 3600.0
    """A judge that is down is asked again with backoff for this long; then the run is held for a person (never a
    pass)."""

    @field_validator("max_wait")
    @classmethod
    def _some_wait(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be longer than 0: it is how long a judge that is down is asked again before the "
                             "run is held for a person; write e.g. \"30m\" (or set [judge] enabled = false)")
        return value
