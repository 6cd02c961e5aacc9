"""The generic command adapter: any CLI agent through a template, one process per turn; its exit is the stop.

``command = "codex exec {prompt}"`` or ``"mytool --prompt-file {prompt_file}"``; ``resume_command`` (optional)
continues the same session with a push-back, with the same placeholders plus ``{session_id}``.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path

from nightshift.supervisor.agents.base import Agent, TurnContext
from nightshift.supervisor.errors import UserError


class CommandTemplateError(UserError, ValueError):
    pass


def fill(template: str, ctx: TurnContext) -> str:
    prompt = ctx.prompt_file.read_text(encoding="utf-8")
    values = {"prompt": shlex.quote(prompt), "prompt_file": shlex.quote(str(ctx.prompt_file)),
              "workspace": shlex.quote(str(ctx.workspace)), "session_id": shlex.quote(ctx.session_id or "")}
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise CommandTemplateError(
            f"agent.command {template!r}: unknown placeholder {exc}; use {{prompt}}, {{prompt_file}}, "
            "{workspace} or {session_id} (double braces for a literal brace)") from None


class CommandAgent(Agent):
    kind = "command"

    def __init__(self, mode: str = "", command: str = ""):
        self.template = command

    def state_paths(self) -> list[Path]:
        """Codex keeps its sessions and login in CODEX_HOME (~/.codex); other agents list theirs in
        [policy] agent_state."""
        if "codex" in self.template.split(" ", 1)[0]:
            return [Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")]
        return []

    def command(self, ctx: TurnContext) -> str:
        cfg = ctx.config.agent
        if not cfg.command:
            raise CommandTemplateError("agent.command is empty; set it in nightshift.toml, e.g. "
                                       "command = \"codex exec {prompt}\"")
        template = cfg.resume_command if (not ctx.fresh and cfg.resume_command) else cfg.command
        return fill(template, ctx)
