"""nightshift.toml: the schema of a workspace's config and errors that name the key and the line.

Loaded with tomllib, validated with pydantic (unknown keys are errors). Each section lives beside the
code that uses it (oracle, judge, slurm); this module assembles them.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from supervisor.config import CONFIG_NAME
from supervisor.config.attest import AttestConfig
from supervisor.config.slurm import SlurmConfig
from supervisor.config.types import Duration, Section
from supervisor.config.judge import JudgeConfig
from supervisor.config.lines import line_of
from supervisor.config.fleet import FleetConfig
from supervisor.config.oracle import OracleConfig
from supervisor.config.policy import PolicyConfig
from supervisor.errors import UserError



class ConfigError(UserError):
    """A one-line message naming the file, line and key, and what to write instead."""


class AgentConfig(Section):
    kind: Literal["claude", "command", "demo"] = "claude"
    # command adapter: {prompt} is the prompt text (shell-quoted), {prompt_file} its path
    command: str = ""
    resume_command: str = ""  # optional: continue the same session with a push-back
    mode: Literal["interactive", "headless"] = "interactive"  # claude only
    claude_bin: str = "claude"
    model: str = ""
    extra_args: list[str] = Field(default_factory=list)
    max_pushbacks_per_shift: int = Field(3, ge=0)
    turn_timeout: Duration = 6 * 3600.0
    hook_timeout: Duration = 600.0  # how long the Stop hook waits for a verdict before letting go
    context_reset_fraction: float = Field(0.7, gt=0, le=1)
    context_window: int = Field(200_000, gt=0)
    # dontAsk: whatever no rule allows is refused, never asked: nothing waits for a human overnight. The rules
    # come from [policy] (see supervisor/agents/claude_settings.py).
    permission_mode: Literal["dontAsk", "acceptEdits", "default", "auto", "plan", "bypassPermissions"] = "dontAsk"


class BackendConfig(Section):
    kind: Literal["tmux", "local", "slurm"] = "tmux"
    tmux_socket: str = ""  # default: nightshift-<uid>, a private per-user socket


class LimitsConfig(Section):
    max_shifts: int = Field(20, ge=1)
    max_hours: float = Field(72.0, gt=0)
    max_cost_usd: float = Field(0.0, ge=0)  # 0 means no cost limit
    max_core_hours: float = Field(0.0, ge=0)  # Slurm runs: CPU-hours of the run's jobs; 0 means no limit
    max_gpu_hours: float = Field(0.0, ge=0)  # Slurm runs: GPU-hours (gres) of the run's jobs; 0 means no limit
    breaker_stops: int = Field(4, ge=1)  # stops in a row with an empty diff and no better verdict
    # An agent silent this long (no output, no tool call, no stop) is nudged once, then its shift ended
    stall_after: Duration = Field(1800.0, gt=0)


class VerifyConfig(Section):
    test_command: str = ""
    junit: bool = True  # add --junitxml to pytest commands for per-test results
    commands: list[str] = Field(default_factory=list)
    timeout: Duration = 1800.0
    require_changelog: bool = True
    require_plan: bool = True
    # A file larger than this (its apparent size) is never committed by nightshift: named, left for the user
    max_commit_mb: float = Field(100.0, gt=0)
    # `init --holdout-tests`: the private folder of held-out tests, run over the candidate at a claim of done
    heldout_tests: str = ""
    heldout_budget: float = 32.0  # bits the held-out tests' answers may release over the run (verify/heldout_tests)


class NotifyConfig(Section):
    command: str = ""  # run on done, paused, breaker and failure; gets NIGHTSHIFT_* variables
    report: bool = False  # write the run's HTML report first; its path is NIGHTSHIFT_REPORT
    on: list[Literal["done", "paused", "breaker", "failed", "blocked", "crashed", "waiting"]] = Field(
        default_factory=lambda: ["done", "paused", "breaker", "failed", "blocked", "crashed", "waiting"])


class Config(Section):
    goal: str = ""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    backend: BackendConfig = Field(default_factory=BackendConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    verify: VerifyConfig = Field(default_factory=VerifyConfig)
    oracle: OracleConfig | None = None
    judge: JudgeConfig | None = None
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    slurm: SlurmConfig = Field(default_factory=SlurmConfig)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    fleet: FleetConfig = Field(default_factory=FleetConfig)
    attest: AttestConfig = Field(default_factory=AttestConfig)


def _describe(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_config(text: str, source: str = CONFIG_NAME) -> Config:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc}); fix the syntax") from None
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal["))))
        line = line_of(text, loc)
        where = f"{source} line {line}" if line else source
        key = _describe(loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"{where}: unknown key {key}; check its spelling (see README, 'nightshift.toml')") from None
        got = err.get("input")
        got_text = f", got {got!r}" if not isinstance(got, dict) and got is not None else ""
        msg = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{where}: {key} {msg[:1].lower()}{msg[1:]}{got_text}") from None


def load_config(workspace: Path) -> Config:
    path = Path(workspace) / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path} not found; run `nightshift init` in the workspace first") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path} line {line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); "
                          f"save the file as UTF-8") from None
    return parse_config(text, str(path))
