"""The [policy] section: the boundary the agent works inside, declared once. Its defaults encode the plan's rules
(never edit the references, the tests that have passed, nightshift.toml, .nightshift/ or the Definition of done;
never read held-out references; never rewrite accepted history; write only in the workspace and the temporary
directory); these keys only add to them or choose what happens at the edges.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from supervisor.config.types import Duration, Section


class PolicyConfig(Section):
    # Compute nodes usually have no network: off means the agent's shell cannot reach the network (a clear
    # refusal, never a hang); on lets it reach what the sandbox allows.
    network: bool = True
    # "auto": Claude Code's sandbox (bubblewrap) for the agent's shell where it can run, the hook and the integrity
    # check alone where it cannot; "required": refuse to start a shift without it; "off": never use it.
    sandbox: Literal["auto", "required", "off"] = "auto"
    protect: list[str] = Field(default_factory=list)  # more workspace paths or globs the agent may not write
    hide: list[str] = Field(default_factory=list)  # more paths (files or folders) the agent may not read
    allow: list[str] = Field(default_factory=list)  # more Claude Code permission rules, e.g. "WebFetch(domain:x.org)"
    deny: list[str] = Field(default_factory=list)  # more rules the agent's tools may never pass, e.g. "Bash(rm:*)"
    # When something on the agent's screen waits for a human and nobody answers within wait_timeout:
    # "deny" answers no and the agent goes on; "wait" keeps waiting (the run says so everywhere).
    on_wait: Literal["deny", "wait"] = "deny"
    wait_timeout: Duration = 1800.0

    @field_validator("protect", "hide")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        for item in value:
            if not item.strip():
                raise ValueError("must not hold an empty path")
        return value

    @field_validator("allow", "deny")
    @classmethod
    def _rules(cls, value: list[str]) -> list[str]:
        for rule in value:
            name = rule.split("(", 1)[0]
            if not name or not name.replace("_", "").isalnum() or (rule.count("(") != rule.count(")")):
                raise ValueError(f"holds {rule!r}, not a permission rule like \"Bash(make:*)\" or \"WebFetch\"")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "PolicyConfig":
        both = sorted(set(self.allow) & set(self.deny))
        if both:
            raise ValueError(f"allow and deny both name {both[0]!r}; keep it in one of them")
        if self.sandbox == "off" and not self.network:
            pass  # allowed: without the sandbox, network off is held by denying the web tools only (doctor says so)
        return self
