"""Agent adapters: how to start an agent with a prompt, how its stops and claims look, where its cost is.

May import: errors, resources, pricing, config, run.
"""
from __future__ import annotations

from nightshift.supervisor.agents.base import Agent, StopInfo, TurnContext


def make_agent(kind: str, mode: str = "interactive", command: str = "") -> Agent:
    if kind == "demo":
        from nightshift.supervisor.agents.demo import DemoAgent
        return DemoAgent()
    if kind == "command":
        from nightshift.supervisor.agents.command import CommandAgent
        return CommandAgent(mode, command)
    if kind == "claude":
        from nightshift.supervisor.agents.claude import ClaudeAgent
        return ClaudeAgent(mode)
    raise ValueError(f"unknown agent {kind!r}; use claude, command or demo")


__all__ = ["Agent", "StopInfo", "TurnContext", "make_agent"]
