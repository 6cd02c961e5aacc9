"""The [fleet] section of nightshift.toml: several lanes (agents, each in its own git worktree) on one goal.

    [fleet]
    lanes = 4                                   # 1: an ordinary single-agent run
    approaches = ["spectral", "finite volume"]  # one per lane, in order; lanes without one pick their own
    select = "first"                            # or "best": wait for the deadline or every lane, keep the lowest error
    deadline = "6h"                             # select = "best" decides by then at the latest (0: no deadline)
    fork_on_stall = false                       # a lane whose breaker trips is replaced from the best commit
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from nightshift.supervisor.config.types import Duration, Section

MAX_LANES = 64  # a fleet past this is a typo more often than a plan; each lane is a worktree and an agent


class FleetConfig(Section):
    lanes: int = Field(1, ge=1, le=MAX_LANES)
    """Agents on the goal, each an ordinary run in its own git worktree; 1: an ordinary single-agent run."""
    approaches: list[str] = Field(default_factory=list)
    """One approach per lane, in order (e.g. "spectral"); lanes without one pick their own."""
    select: Literal["first", "best"] = "first"
    """"first": keep the first lane verified done; "best": wait for the deadline (or every lane) and keep the lowest
    worst error over tolerance."""
    deadline: Duration = 0.0
    """With select = "best": decide by then at the latest; 0: no deadline."""
    fork_on_stall: bool = False
    """A lane whose breaker trips is replaced by a fresh one from the best honest commit."""
    max_forks: int = Field(4, ge=0)
    """Fresh lanes started on stalls, at most."""

    @model_validator(mode="after")
    def _approaches_fit(self) -> "FleetConfig":
        if len(self.approaches) > self.lanes:
            raise ValueError(f"lists {len(self.approaches)} approaches for {self.lanes} lane(s); give at most one "
                             f"approach per lane, or raise lanes to {len(self.approaches)}")
        if any(not a.strip() for a in self.approaches):
            raise ValueError("holds an empty approach; name each approach in a few words")
        return self
