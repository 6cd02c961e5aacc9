"""The vocabulary of the preflight's checks: a ``Line`` each (ok, note, FAIL with its fix, skip) and the
``PreflightContext`` every check receives. A leaf, so the checks and the runner import it without a circle."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OK, NOTE, FAIL, SKIP = "ok", "note", "FAIL", "skip"
WARN = "WARN"  # not blocking, but weaker than it should be (a boundary without a namespace): said with its fix


@dataclass
class Line:
    status: str  # ok | note (worth knowing, not blocking) | WARN (weaker than full, with the fix) | FAIL (a run would
    # fail; the text says the fix) | skip
    what: str  # the part checked: config, plan, oracle, calibration, tests, agent, slurm, ...
    text: str
    # Shown after the text on `nightshift check`'s screen only, never recorded nor printed where a run starts: what the
    # agent must not read (the held-out tests' ids), as the run's log and a batch job's output are in its sight.
    check_only: str = ""


@dataclass
class PreflightContext:
    workspace: Path
    out_dir: Path  # where the commands' output and the oracle report are kept
    agent_turn: bool = False  # run one short real turn of the agent
    job: bool = False  # Slurm: also run the tiny environment job
    backend: str | None = None  # overrides [backend] kind, as `run --backend` does
    agent: str | None = None  # overrides [agent] kind, as `run --agent` does
    config: Any = None  # the Config, once the config line passed
    baseline: dict | None = None  # the oracle's figures today: {"metric", "metrics", "summary", "report"}
    scratch: dict = field(default_factory=dict)  # what one check leaves for another
