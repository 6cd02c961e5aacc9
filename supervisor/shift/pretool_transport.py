"""How Claude Code's PreToolUse hook reaches the run's decision: over HTTP to the turn's resident helper (no process
per call), or a command hook (a shell, socat to the helper where it runs, else a Python interpreter per call).

HTTP needs three things: a CLI whose HTTP hooks fail closed (``onFailure: "block"``), a namespace for the turn (the
helper is started by the turn's wrapper beside bubblewrap and its door is the namespace's loopback), and the
agent being Claude Code. ``check``, ``doctor`` and the run's ``policy.sandbox`` event say which one a run uses and,
for the command hook, why.
"""
from __future__ import annotations

from dataclasses import dataclass

from nightshift.supervisor.agents.claude_version import http_hook_problem
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.sandbox.probe import namespace_problem
from nightshift.supervisor.sandbox.tier import tier_for

HTTP, COMMAND = "http", "command"


@dataclass(frozen=True)
class Transport:
    kind: str  # "http" or "command"
    why: str  # for "command": why not HTTP; for "http": how it is reached
    agent: str = "claude"  # the agent kind: only Claude Code has a tool-call hook

    def line(self) -> str:
        if self.agent != "claude":  # its settings are never written: no hook of any kind decides its calls
            return f"the {self.agent} agent has no tool-call hook (that is Claude Code's): {self.why}"
        if self.kind == HTTP:
            return f"Claude Code's tool calls are decided over an HTTP hook ({self.why}; fails closed)"
        return f"Claude Code's tool calls are decided by a command hook: {self.why}"


def pretool_transport(config: Config) -> Transport:
    problem = namespace_problem(config.policy.sandbox)
    tier = tier_for(config.policy.sandbox)  # without a namespace: Landlock's launcher, or nothing (sandbox/tier.py)
    if config.agent.kind != "claude":
        holds = "nightshift's namespace" if problem is None else tier.label()
        return Transport(COMMAND, f"{holds} holds its processes, and the check at each stop the rules a mount cannot "
                         "say", agent=config.agent.kind)
    if problem is not None and not tier.confined:
        return Transport(COMMAND, f"no namespace for the turn ({problem}), so no resident helper")
    cli = http_hook_problem(config.agent.claude_bin)
    if cli is not None:
        return Transport(COMMAND, cli)
    door = ("the namespace's own loopback, its listening socket held outside" if not config.policy.network
            and problem is None else "127.0.0.1 on an ephemeral port with a per-turn secret path")
    return Transport(HTTP, f"to the turn's resident helper through {door}")
