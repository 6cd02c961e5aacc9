"""The [policy] section: the boundary the agent works inside, declared once. Its defaults encode the plan's rules
(never edit the references, the tests that have passed, nightshift.toml, .nightshift/ or the Definition of done;
never read held-out references; never rewrite accepted history; write only in the workspace and the temporary
directory); these keys only add to them or choose what happens at the edges.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from nightshift.supervisor.config.credential_places import CREDENTIAL_PLACES
from nightshift.supervisor.config.doors import PART_DOORS
from nightshift.supervisor.config.types import Duration, Section


class PolicyConfig(Section):
    # Compute nodes usually have no network: off means the agent's shell cannot reach the network (a clear
    # refusal, never a hang); on lets it reach what the sandbox allows.
    network: bool = True
    """The agent's network; false (compute nodes): no address but the model's API, through a proxy nightshift runs."""
    # The boundary around every process of the agent and of its code (the turn, the test and verify commands, the
    # oracle command), in tiers (sandbox/tier.py): "full" is bubblewrap's namespace; where user namespaces are off or
    # bubblewrap is missing, "landlock" (Landlock and seccomp, no namespace) or "seccomp" alone; "off" nothing.
    # "auto" takes the strongest the machine gives, "required" only full, "landlock" full or landlock, "off" none
    # (the hook and the after-the-fact checks alone). Every verdict, status line, report and attestation names it.
    sandbox: Literal["auto", "required", "landlock", "off"] = "auto"
    """The boundary around every process of the agent and its code: "auto" the strongest this machine gives (bubblewrap's
    full sandbox; where user namespaces are off or bubblewrap is missing, Landlock and seccomp without a namespace, or
    seccomp alone; every result names it), "required": full only (the run is held without it), "landlock": full or
    Landlock (accepts the tier without a namespace, refuses seccomp alone), "off": none."""
    # Claude Code's own sandbox as a second layer inside the namespace (costs ~90-250 ms per shell command).
    claude_sandbox: bool = False
    """Claude Code's own sandbox as a second layer inside the namespace (costs ~90-250 ms per shell command)."""
    # Where held-out comparisons cannot be protected (no namespace): "protected" holds the run before it starts;
    # "unprotected" runs anyway, said in every verdict.
    heldout: Literal["protected", "unprotected"] = "protected"
    """Where held-out comparisons cannot be protected (no namespace): "protected" holds the run before it starts;
    "unprotected" runs anyway, said in every verdict."""
    # Network for the test, verify and oracle commands (code the agent wrote); the agent's own is `network`.
    command_network: bool = False
    """Network for the test, verify and oracle commands (needs network = true)."""
    # Folders (or files) outside the workspace the agent's own CLI must write, e.g. "~/.codex" (Claude Code's config
    # folder is found by itself); everything else outside the workspace and the private TMPDIR is read-only.
    agent_state: list[str] = Field(default_factory=list)
    """Folders outside the workspace another agent's CLI must write, e.g. "~/.codex" (Claude Code's is found by
    itself)."""
    protect: list[str] = Field(default_factory=list)
    """More workspace paths or globs the agent may not write."""
    hide: list[str] = Field(default_factory=list)
    """More paths the agent may not read."""
    allow: list[str] = Field(default_factory=list)
    """More Claude Code permission rules, e.g. "WebFetch(domain:docs.python.org)"."""
    deny: list[str] = Field(default_factory=list)
    """More rules nothing passes, e.g. "Bash(rm -rf:*)"."""
    # Credential places in $HOME no process of the agent may read: the default list (CREDENTIAL_PLACES above: ~/.ssh, ~/.gnupg, cloud and forge CLIs, netrc, git credentials, docker, kube...) plus
    # deny_read; allow_read takes entries of the default list back, written as they are there ("~/.kube").
    deny_read: list[str] = Field(default_factory=list)
    """More credential places no process of the agent may read, absolute or from ~ (e.g. "~/.config/mytool")."""
    allow_read: list[str] = Field(default_factory=list)
    """Entries of the default credential deny-list to take back, as written there (e.g. "~/.kube")."""
    # Unix sockets of the user or the machine a process inside may reach (none by default; a Slurm run gets munge's).
    sockets: list[str] = Field(default_factory=list)
    """Unix sockets of yours or the machine's reachable inside, absolute (a Slurm run gets munge's)."""
    # Parts of the sandbox this machine may lack that a run with held-out comparisons accepts going without, by
    # name: "userns" (no user namespace), "seccomp" (no filter), "landlock" (no abstract-socket scope: kernels before
    # 6.12, a part only with the network on). Without, such a run is held before it starts.
    open_doors: list[Literal[PART_DOORS]] = Field(default_factory=list)
    """Parts of the sandbox this machine may lack that a run with held-out comparisons accepts going without: "userns",
    "seccomp", "landlock"."""
    # When something on the agent's screen waits for a human and nobody answers within wait_timeout:
    # "deny" answers no and the agent goes on; "wait" keeps waiting (the run says so everywhere).
    on_wait: Literal["deny", "wait"] = "deny"
    """A prompt nobody answers within wait_timeout: "deny" answers no and the agent goes on; "wait" keeps waiting."""
    wait_timeout: Duration = 1800.0
    """How long a prompt on the agent's screen waits for a person."""

    @field_validator("allow_read")
    @classmethod
    def _defaults(cls, value: list[str]) -> list[str]:
        for item in value:
            if item not in CREDENTIAL_PLACES:
                raise ValueError(f"holds {item!r}, not an entry of the default deny-list; write one of them as it is "
                                 f"there (e.g. \"~/.kube\"): {', '.join(CREDENTIAL_PLACES)}")
        return value

    @field_validator("sockets", "deny_read")
    @classmethod
    def _absolute(cls, value: list[str], info) -> list[str]:
        """A relative path would be taken relative to wherever the supervisor started: absolute or ~ only."""
        example = "/run/munge/munge.socket.2" if info.field_name == "sockets" else "~/.config/mytool"
        for item in value:
            if not item.strip().startswith(("/", "~")):
                raise ValueError(f"holds {item!r}: name it by its absolute path or from ~, e.g. \"{example}\"")
        return [item.strip() for item in value]

    @field_validator("protect", "hide", "agent_state", "deny_read")
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
        if self.command_network and not self.network:
            raise ValueError("command_network = true with network = false: the agent could reach the network through "
                             "a test command; set command_network = false, or network = true")
        if self.sandbox == "required" and self.heldout == "unprotected":
            raise ValueError("sandbox = \"required\" with heldout = \"unprotected\": a required namespace always "
                             "protects held-out references; drop heldout, or set sandbox = \"auto\"")
        return self
