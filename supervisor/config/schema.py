"""nightshift.toml: the schema of a workspace's config and errors that name the key and the line.

Loaded with tomllib, validated with pydantic (unknown keys are errors). Each section lives beside the
code that uses it (oracle, judge, slurm); this module assembles them.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from nightshift.supervisor.config import CONFIG_NAME
from nightshift.supervisor.config.attest import AttestConfig
from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.supervisor.config.types import Duration, Section
from nightshift.supervisor.config.judge import JudgeConfig
from nightshift.supervisor.config.lines import line_of
from nightshift.supervisor.config.fleet import FleetConfig
from nightshift.supervisor.config.oracle import OracleConfig
from nightshift.supervisor.config.policy import PolicyConfig
from nightshift.supervisor.errors import UserError



class ConfigError(UserError):
    """A one-line message naming the file, line and key, and what to write instead."""


class AgentConfig(Section):
    kind: Literal["claude", "command", "demo"] = "claude"
    """Which agent works the shifts: Claude Code, any CLI agent through `command`, or the scripted offline demo agent."""
    # command adapter: {prompt} is the prompt text (shell-quoted), {prompt_file} its path
    command: str = ""
    """For kind = "command": the agent's command line; {prompt} is the prompt text (shell-quoted), {prompt_file} its
    path. Its exit is the stop."""
    resume_command: str = ""
    """For kind = "command" (optional): the command that continues the same session with a push-back."""
    mode: Literal["interactive", "headless"] = "interactive"
    """Claude Code only: "interactive" in a tmux pane with nightshift's Stop hook, or "headless" (`claude -p` per turn,
    pushed back with --resume)."""
    claude_bin: str = "claude"
    """The Claude Code CLI to run (a name on PATH or a path)."""
    model: str = ""
    """The model the agent's CLI is asked for (Claude Code's --model); empty: the CLI's own default."""
    extra_args: list[str] = Field(default_factory=list)
    """More arguments for the Claude Code CLI, as a list."""
    max_pushbacks_per_shift: int = Field(3, ge=0)
    """Push-backs in the same session before a fresh shift (a context reset with the orientation prompt)."""
    turn_timeout: Duration = 6 * 3600.0
    """The longest one turn of the agent may run before it is ended."""
    hook_timeout: Duration = 600.0
    """How long the Stop hook waits for a verdict before letting the agent stop."""
    context_reset_fraction: float = Field(0.7, gt=0, le=1)
    """Past this fraction of the context window the next push-back is a fresh shift instead."""
    context_window: int = Field(200_000, gt=0)
    """The agent's context window in tokens (for context_reset_fraction)."""
    # dontAsk: whatever no rule allows is refused, never asked: nothing waits for a human overnight. The rules
    # come from [policy] (see supervisor/agents/claude_settings.py).
    permission_mode: Literal["dontAsk", "acceptEdits", "default", "auto", "plan", "bypassPermissions"] = "dontAsk"
    """Claude Code's permission mode; "dontAsk" refuses what no rule allows, so nothing waits for a human overnight."""


class BackendConfig(Section):
    kind: Literal["tmux", "local", "slurm"] = "tmux"
    """Where the agent runs: a tmux pane (login node), a local process, or Slurm batch jobs."""
    tmux_socket: str = ""
    """The tmux socket (-L) name; empty: a private server per run, ns-<run id>."""


class LimitsConfig(Section):
    max_shifts: int = Field(20, ge=1)
    """Shifts (agent sessions) a run may use; then it pauses (budget spent). In a fleet, per lane."""
    max_hours: float = Field(72.0, gt=0)
    """Wall-clock hours a run may take; then it pauses (budget spent)."""
    max_cost_usd: float = Field(0.0, ge=0)
    """The agent's and judge's cost in USD, from their own usage reports; 0 means no limit."""
    max_core_hours: float = Field(0.0, ge=0)
    """Slurm runs: CPU-hours of the run's jobs (from sacct, or elapsed x CPUs); 0 means no limit."""
    max_gpu_hours: float = Field(0.0, ge=0)
    """Slurm runs: GPU-hours (gres) of the run's jobs; 0 means no limit."""
    breaker_stops: int = Field(4, ge=1)
    """The breaker: stops in a row with an empty diff and no better verdict before the run pauses."""
    # An agent silent this long (no output, no tool call, no stop) is nudged once, then its shift ended
    stall_after: Duration = Field(1800.0, gt=0)
    """An agent silent this long (no output, no tool call, no stop) is nudged once, then its shift is ended and a fresh
    one started; with Claude Code at least its Bash tool's 10 min timeout. A Slurm job waiting in the queue is not
    silent."""


class VerifyConfig(Section):
    test_command: str = ""
    """The test command run at every verdict (the test ratchet); run inside the agent's namespace."""
    junit: bool = True
    """Load nightshift's pytest plugin into every pytest the test command starts (per-test results the ratchet names
    each test by, the equality probe, the sentinels); false: the command runs as it is and only totals count."""
    commands: list[str] = Field(default_factory=list)
    """More commands that must exit 0 at every verdict, run inside the namespace."""
    timeout: Duration = 1800.0
    """The longest the test and verify commands may run, each."""
    require_changelog: bool = True
    """Each shift must add to CHANGELOG.md (the lab notes)."""
    require_plan: bool = True
    """A claim of done needs every plan item in CLAUDE.md checked."""
    # A file larger than this (its apparent size) is never committed by nightshift: named, left for the user
    max_commit_mb: float = Field(100.0, gt=0)
    """A file larger than this (apparent size), a symlink out of the workspace or a nested repository is never
    committed by nightshift: named in the commit event and `nightshift log` as left for you."""
    # `init --holdout-tests`: the private folder of held-out tests, run over the candidate at a claim of done
    heldout_tests: str = ""
    """The private folder of held-out tests (written by `init --holdout-tests`), run over the candidate at a claim of
    done."""
    heldout_budget: float = 32.0
    """Bits the held-out tests' answers may release to the agent over the run."""


class NotifyConfig(Section):
    command: str = ""
    """A shell command run on the events in `on`, with NIGHTSHIFT_EVENT, NIGHTSHIFT_RUN and NIGHTSHIFT_MESSAGE set."""
    report: bool = False
    """Write the run's HTML report first; its path is NIGHTSHIFT_REPORT."""
    on: list[Literal["done", "paused", "breaker", "failed", "blocked", "crashed", "waiting"]] = Field(
        default_factory=lambda: ["done", "paused", "breaker", "failed", "blocked", "crashed", "waiting"])
    """The events that run the notify command."""


class Config(Section):
    goal: str = ""
    """What must be true, measured how (e.g. "agree with CLASS to 0.1%"); `nightshift init --goal` writes it."""
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
