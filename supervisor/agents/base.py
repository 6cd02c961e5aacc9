"""The agent adapter interface, shaped for both kinds of agent:

- exit-driven (headless, one process per turn: ``claude -p``, ``codex exec``, the demo): the process exit is
  the stop; a push-back in the same session is the next turn's process (with ``--resume`` where supported);
- hook-driven (interactive Claude Code in a tmux pane): the process keeps running; each stop arrives through
  the Stop hook (supervisor/stop_channel.py) and a push-back in the same session is the hook's block answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.run.paths import RunPaths


@dataclass
class TurnContext:
    run: RunPaths
    config: Config
    shift: int
    turn: int
    prompt_file: Path  # what to say this turn: the orientation prompt, or a push-back
    fresh: bool  # the first turn of a shift (a fresh context) rather than a push-back in the same session
    token: str  # the shift's token; the Stop hook acts only in sessions carrying it
    session_id: str | None = None  # the session of the previous turn, for resuming
    log_file: Path | None = None
    policy: dict[str, Any] | None = None  # the run's compiled boundary (shift/policy.py), for the agent's settings
    pretool: str = "command"  # how the PreToolUse hook reaches the decision: "http" or "command"

    @property
    def workspace(self) -> Path:
        return self.run.workspace

    def file(self, name: str) -> Path:
        """A per-turn file in the shift directory, e.g. ``t2.stream.jsonl``."""
        return self.run.turn_file(self.shift, self.turn, name)


@dataclass
class StopInfo:
    reason: str = "exit"  # exit | hook | lost | timeout | stopped
    exit_code: int | None = None
    last_message: str = ""
    session_id: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    context_tokens: int | None = None  # how much of the context window the session has used
    error: str | None = None  # one line, when the agent or its API failed
    wait_until: float | None = None  # epoch seconds: an overload or usage limit; wait, do not count a shift

    def to_event(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "", {}) or k == "exit_code"}


class Agent:
    kind = "base"
    hook_driven = False  # True: stops come through the Stop hook, not the process exit
    can_resume = False  # True: a push-back can continue the same session in a new process

    def state_paths(self) -> list[Path]:
        """What the agent's own CLI writes outside the workspace (its config, sessions): writable in its namespace."""
        return []

    def state_fix(self, path: Path) -> str:
        return "create it (start the agent's CLI once by hand), or list another place in [policy] agent_state"

    def launch_problem(self, config: Config) -> str | None:
        """Why a turn of this agent cannot start with this config on this machine (a one-line fix), or None."""
        return None

    def prepare(self, ctx: TurnContext) -> None:
        """Write whatever the agent needs before a turn (settings, hook config). Default: nothing."""

    def command(self, ctx: TurnContext) -> str:
        """The shell command line that runs this turn."""
        raise NotImplementedError

    def env(self, ctx: TurnContext) -> dict[str, str]:
        """Non-secret environment for the turn (secrets reach the agent by inheritance only)."""
        return {}

    def read_stop(self, ctx: TurnContext, exit_code: int | None) -> StopInfo:
        """What the turn's own records say about how it ended (cost, session, errors)."""
        return StopInfo(reason="exit", exit_code=exit_code)

    def read_hook_stop(self, ctx: TurnContext, request: dict[str, Any]) -> StopInfo:
        """A stop reported by the Stop hook (hook-driven agents)."""
        return StopInfo(reason="hook", last_message=str(request.get("last_assistant_message", ""))[:2000],
                        session_id=request.get("session_id"))

    def is_idle(self, screen: str) -> bool:
        """Does an interactive agent's screen show it waiting for input?"""
        return False

    def check_screen(self, screen: str) -> str | None:
        """A one-line problem seen on an interactive agent's screen (e.g. a first-run dialog), or None."""
        return None
