"""The settings nightshift hands Claude Code for a shift (``--settings <run>/claude-settings.json``; the user's
own settings stay untouched): the hooks (Stop, PreToolUse over HTTP or as a command, PermissionRequest) and the boundary of the run's
compiled policy as permission rules and sandbox settings.

Verified on the pinned CLI (2.1.330): in ``dontAsk`` mode whatever no rule allows is refused, never asked, so
nothing waits overnight; deny rules beat every allow, the hook's included; a path rule needs ``//`` to be
absolute; ``Edit(...)`` rules cover Write too; the sandbox (bubblewrap) hides denied paths from every process of
the shell, makes everything outside the workspace and the temporary directory read-only (and denyWrite paths
inside it), and cuts the network unless domains are allowed (``["*"]`` allows all).
"""
from __future__ import annotations

import shlex
from typing import Any

from nightshift.supervisor.run.own_python import bare_argv

# Tools the agent always has: reading, searching, its todo list, sub-agents (which meet the same rules).
# Where the HTTP hook points until the turn's helper writes its own URL: port 1 is privileged and never served, so a
# call made before (or without) the helper is refused, never allowed.
HTTP_PLACEHOLDER = "http://127.0.0.1:1/pretool"
ALWAYS = ["Read", "Glob", "Grep", "LS", "TodoWrite", "Task", "NotebookRead", "BashOutput", "KillShell"]


def hook_command(module: str, *args: str) -> str:
    """A hook started the fastest way (it runs at every tool call): own_python.bare_argv (-c instead of runpy's -m,
    ~5 ms) as one shell line."""
    return shlex.join(bare_argv(module, *args))


def pretool_command() -> str:
    """The PreToolUse hook: the turn's resident decision helper when its socket is there (a shell and socat, a few
    ms; see shift/pretool_server.py), else the hook itself. socat exits non-zero before reading the payload when it
    cannot connect, so the hook still reads it whole."""
    return ('[ -S "${NIGHTSHIFT_PRETOOL_SOCKET:-/-}" ] && socat -t 30 - "UNIX-CONNECT:$NIGHTSHIFT_PRETOOL_SOCKET" '
            f'2>/dev/null && exit 0; {hook_command("nightshift.supervisor.shift.pretool")}')


def _abs_rule(tool: str, path: str) -> str:
    return f"{tool}(/{path})" if path.startswith("/") else f"{tool}({path})"  # "//abs" is absolute


def pretool_hook(transport: str) -> dict[str, Any]:
    """The PreToolUse hook. "http": POSTed to the turn's resident helper, which writes its URL over the placeholder
    when it starts (shift/pretool_http.py); any failure (nothing listening, an error, a body that is not JSON, the
    timeout) blocks the call. "command": a shell per call (see ``pretool_command``)."""
    if transport == "http":
        return {"type": "http", "url": HTTP_PLACEHOLDER, "timeout": 30, "onFailure": "block"}
    return {"type": "command", "timeout": 30, "command": pretool_command()}


def claude_settings(policy: dict[str, Any] | None, hook_timeout: int | None, extra_allow: list[str],
                    extra_deny: list[str], mode: str = "dontAsk", pretool: str = "command") -> dict[str, Any]:
    """``hook_timeout`` None: no Stop hook (a headless turn's stop is its exit). ``mode`` "default" is a user who
    wants shell commands asked: the shell gets no allow rule then (and the run says when it waits). ``pretool``:
    "http" or "command" (shift/pretool_transport.py decides). The Stop hook stays a command hook: it runs once per
    stop, beside a verification that takes seconds, and Claude Code ignores onFailure on Stop (an HTTP Stop hook
    that cannot be reached would let the agent stop unverified)."""
    hooks: dict[str, Any] = {}
    if hook_timeout is not None:
        hooks["Stop"] = [{"hooks": [{"type": "command", "command": hook_command("nightshift.supervisor.shift.hook", "stop"),
                                     "timeout": hook_timeout}]}]
    if policy is None:
        return {"hooks": hooks}
    hooks["PreToolUse"] = [{"matcher": "*", "hooks": [pretool_hook(pretool)]}]
    hooks["PermissionRequest"] = [{"matcher": "*", "hooks": [{"type": "command", "timeout": 30,
                                                              "command": hook_command("nightshift.supervisor.shift.waits")}]}]
    ws, sandbox, network = policy["workspace"], bool(policy.get("sandbox")), bool(policy.get("network", True))
    allow = list(ALWAYS) + [_abs_rule("Edit", f"{ws}/**")]
    allow += [_abs_rule("Edit", f"{folder}/**") for folder in policy.get("writable", [])]
    # The shell: inside the sandbox when it runs (allowUnsandboxedCommands is off), else held by the hook and the
    # integrity check. An explicit allow: the sandbox's own auto-allow refuses commands with $(...) in them.
    if mode != "default":
        allow.append("Bash")
    if network:
        allow += ["WebFetch", "WebSearch"]
    # Paths are refused by the hook, not by deny rules: Claude Code applies a file tool's path rules before the
    # hook runs and records nothing, so a refusal would be invisible (verified on 2.1.330). The shell's hands are
    # held by the sandbox (denyRead, denyWrite below); .nightshift/ as a whole is the hook's, and for the shell
    # only the run's own records are, so `nightshift claim` still writes its claim from the agent's shell.
    deny = ["Bash(git push --force:*)", "Bash(git push -f:*)", "Bash(git commit --amend:*)"]
    if not network:
        deny += ["WebFetch", "WebSearch"]
    no_write = [p.rstrip("*").rstrip("/") for p, rule, _ in policy["protect"] if rule not in ("run_state", "git_internals")]
    no_write += [p.rstrip("*").rstrip("/") for p in policy.get("run_files", [])]
    settings: dict[str, Any] = {
        "hooks": hooks,
        "permissions": {"allow": allow + [r for r in extra_allow if r not in allow],
                        "deny": deny + [r for r in extra_deny if r not in deny]},
    }
    if pretool == "http":
        settings["allowedHttpHookUrls"] = [HTTP_PLACEHOLDER]
    if sandbox:
        network_rules: dict[str, Any] = {"allowedDomains": [] if not network else ["*"]}
        settings["sandbox"] = {
            "enabled": True, "failIfUnavailable": True, "autoAllowBashIfSandboxed": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyRead": [h for h, _ in policy.get("hide", [])],
                           "allowWrite": list(policy.get("writable", [])), "denyWrite": no_write},
            "network": network_rules,
        }
    return settings
