"""Claude Code as the agent: interactive in a tmux pane with a Stop hook, or headless (`claude -p`, stream-json).

Interactive: nightshift gives the session a Stop hook through ``--settings <run dir>/claude-settings.json`` (the
user's own settings stay untouched); the hook runs `nightshift hook stop`, which acts only in a session carrying
the shift's token. Headless: one process per turn; a push-back resumes the session with ``--resume``.
Credentials reach the CLI by inheritance only; nothing of them is written by nightshift.
"""
from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.agents.base import Agent, StopInfo, TurnContext
from nightshift.supervisor.agents.claude_records import read_stream, read_transcript
from nightshift.supervisor.agents.claude_settings import claude_settings
from nightshift.supervisor.pricing import price_for, usage_cost

# Environment that pins the agent for multi-day runs (no self-update mid-run, no plugin marketplace installs).
PINNED_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1"}

DIALOGS = {
    "Is this a project you created or one you trust": "Claude Code asks whether to trust this workspace: run "
        "`nightshift init --trust` in it (or start `claude` there once and accept), then `nightshift resume RUN`",
    "Do you want to use this API key": "Claude Code asks whether to use the API key in the environment: start "
        "`claude` once and answer Yes (or use ANTHROPIC_AUTH_TOKEN), then `nightshift resume RUN`",
    "Unable to connect to Anthropic services": "Claude Code's first-run check cannot reach Anthropic: finish its "
        "onboarding by starting `claude` once on a machine with access, then `nightshift resume RUN`",
    "Bypass Permissions mode": "Claude Code asks to confirm bypass-permissions mode: drop "
        "--dangerously-skip-permissions from agent.extra_args or accept it once by hand",
    "Select login method": "Claude Code is not logged in: run `claude` and log in (or set ANTHROPIC_API_KEY), "
        "then `nightshift resume RUN`",
}


def claude_config_file() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base) / ".claude.json" if base else Path.home() / ".claude.json"


def trust_workspace(workspace: Path) -> str:
    """Record workspace trust in the user's Claude config, keeping everything else in the file."""
    path = claude_config_file()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        return f"{path} is not valid JSON; not changed (fix it, or accept the trust dialog by hand)"
    data.setdefault("projects", {}).setdefault(str(Path(workspace).resolve()), {})["hasTrustDialogAccepted"] = True
    tmp = path.with_name(path.name + ".nightshift.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return f"trust for {Path(workspace).resolve()} recorded in {path}"


def stop_hook_settings(hook_timeout: float) -> dict[str, Any]:
    """The Stop hook alone, as a supervised session gets it (the preflight proves it runs)."""
    return claude_settings(None, int(hook_timeout) + 60, [], [])


def _price(usage: dict[str, Any], model: str) -> float:
    return usage_cost(price_for(model or "claude-opus"), usage)


class ClaudeAgent(Agent):
    kind = "claude"

    def __init__(self, mode: str = "interactive"):
        self.mode = mode
        self.hook_driven = mode == "interactive"
        self.can_resume = mode == "headless"

    def launch_problem(self, config) -> str | None:
        bypass = config.agent.permission_mode == "bypassPermissions" or \
            "--dangerously-skip-permissions" in config.agent.extra_args
        if bypass and os.getuid() == 0 and not os.environ.get("IS_SANDBOX"):
            return ("Claude Code refuses bypass mode as root unless IS_SANDBOX=1 is set; nightshift does not need it: "
                    "remove permission_mode = \"bypassPermissions\" (or --dangerously-skip-permissions) from [agent], "
                    "the default dontAsk mode with the run's rules asks nothing")
        return None

    def state_paths(self) -> list[Path]:
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return [Path(base)] if base else [Path.home() / ".claude", Path.home() / ".claude.json"]

    def state_fix(self, path: Path) -> str:
        return ("start `claude` once by hand (it creates its config and asks for a login), or point CLAUDE_CONFIG_DIR "
                "at an existing folder; then `nightshift resume RUN`")

    def settings_file(self, ctx: TurnContext) -> Path:
        return ctx.run.root / "claude-settings.json"

    def prepare(self, ctx: TurnContext) -> None:
        cfg = ctx.config
        stop_hook = int(cfg.agent.hook_timeout) + 60 if self.hook_driven else None
        settings = claude_settings(ctx.policy, stop_hook, cfg.policy.allow, cfg.policy.deny, cfg.agent.permission_mode,
                                   pretool=ctx.pretool)
        path = self.settings_file(ctx)
        path.write_text(json.dumps(settings, indent=1))
        os.chmod(path, 0o600)

    def _common(self, ctx: TurnContext) -> list[str]:
        cfg = ctx.config.agent
        args = [cfg.claude_bin]
        if cfg.permission_mode:
            args += ["--permission-mode", cfg.permission_mode]
        if cfg.model:
            args += ["--model", cfg.model]
        return args + list(cfg.extra_args)

    def command(self, ctx: TurnContext) -> str:
        prompt = shlex.quote(str(ctx.prompt_file))
        if self.mode == "interactive":
            args = self._common(ctx) + ["--settings", str(self.settings_file(ctx))]
            return " ".join(shlex.quote(a) for a in args) + f' "$(cat {prompt})"'
        args = self._common(ctx) + ["-p", "--output-format", "stream-json", "--verbose", "--settings",
                                    str(self.settings_file(ctx))]
        if not ctx.fresh and ctx.session_id:
            args += ["--resume", ctx.session_id]
        stream = shlex.quote(str(ctx.file("stream.jsonl")))
        return " ".join(shlex.quote(a) for a in args) + f" < {prompt} > {stream}"

    def env(self, ctx: TurnContext) -> dict[str, str]:
        return {**PINNED_ENV, "NIGHTSHIFT_HOOK_TIMEOUT": str(int(ctx.config.agent.hook_timeout))}

    def read_stop(self, ctx: TurnContext, exit_code: int | None) -> StopInfo:
        if self.mode == "interactive":  # the interactive CLI itself exited (/exit, a crash)
            return StopInfo(reason="exit", exit_code=exit_code, session_id=ctx.session_id,
                            error=None if exit_code == 0 else f"claude exited with status {exit_code}")
        stop = read_stream(ctx.file("stream.jsonl"), exit_code)
        return stop

    def read_hook_stop(self, ctx: TurnContext, request: dict[str, Any]) -> StopInfo:
        transcript = request.get("transcript_path")
        path = Path(transcript) if transcript else None
        cost, usage, context, last = read_transcript(path, _price)
        # The transcript holds the whole session: charge only what is new since the last stop.
        seen = ctx.run.root / f"claude-cost-{ctx.shift}.json"
        before = float(json.loads(seen.read_text())["cost"]) if seen.exists() else 0.0
        seen.write_text(json.dumps({"cost": cost, "ts": time.time()}))
        error = None if path is None or path.exists() else f"transcript {path} is missing"
        return StopInfo(reason="hook", last_message=str(request.get("last_assistant_message") or last)[:2000],
                        session_id=request.get("session_id"), cost_usd=max(0.0, cost - before), usage=usage,
                        context_tokens=context, error=error)

    def is_idle(self, screen: str) -> bool:
        return "esc to interrupt" not in screen and "❯" in screen

    def check_screen(self, screen: str) -> str | None:
        for marker, advice in DIALOGS.items():
            if marker in screen:
                return advice
        return None
