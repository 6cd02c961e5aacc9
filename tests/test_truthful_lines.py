"""Lines that said something untrue (issue 40), each checked where a person reads it: `status` names the commit
the last verdict checked (the agent's own commit, not the run's base), `ls` explains its star only when a row has
one, init's nightshift.toml and `doctor` say what holds the agent for its kind, and a run's story says which
boundary holds a demo or command agent (nightshift's namespace, no hook) and which a Claude Code one.
Real git workspaces from `nightshift init`, real supervisors, the scripted command agent.
"""
from __future__ import annotations

import subprocess

from nightshift.supervisor.run.story import describe
from tests.fixtures_core import nightshift, workspace  # noqa: F401

OWN_COMMIT = ["shell", "git add -A && git -c user.name=a -c user.email=a@a commit -qm 'my own commit'"]


def head(path) -> str:
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def test_status_names_the_commit_the_failing_verdict_checked_when_the_agent_committed_itself(workspace):
    ws = workspace.configure({"s1t1": [["write", "check.txt", "not yet"], OWN_COMMIT, ["claim", "done", "mine"]]},
                             backend="local", max_shifts=1, pushbacks=0)
    base = head(ws.path)
    out = nightshift("run", str(ws.path), "--foreground", timeout=180)
    agents = head(ws.path)
    assert out.returncode != 0 and agents != base, out.stdout + out.stderr
    assert "my own commit" in subprocess.run(["git", "-C", str(ws.path), "log", "-1", "--format=%s"],
                                             capture_output=True, text=True).stdout  # nothing left for us to commit
    trust = next(line for line in nightshift("status", cwd=ws.path).stdout.splitlines() if line.startswith("trust"))
    assert f"last verdict at commit {agents[:10]} failed" in trust and base[:10] not in trust, trust
    # the run's supervisor is gone and the run is not finished: its row is starred, and the legend says why
    listed = nightshift("ls").stdout
    assert "*" in listed.splitlines()[1] and "* no live supervisor" in listed, listed


def test_ls_without_a_starred_row_has_no_star_legend(workspace):
    ws = workspace.configure({"s1t1": [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]}, backend="local")
    assert nightshift("run", str(ws.path), "--foreground", timeout=180).returncode == 0
    listed = nightshift("ls").stdout
    assert " done " in listed and "*" not in listed, listed


def test_inits_toml_and_doctor_say_what_holds_the_agent_for_its_kind(tmp_path):
    for agent in ("command", "claude"):
        folder = tmp_path / agent
        folder.mkdir()
        assert nightshift("init", str(folder), "--agent", agent, "--yes", "--goal", "g").returncode == 0
        sandbox = next(line for line in (folder / "nightshift.toml").read_text().splitlines()
                       if line.startswith("sandbox ="))
        assert "nightshift's namespace" in sandbox and "Claude Code" not in sandbox, sandbox
        rows = nightshift("doctor", str(folder), timeout=120).stdout
        tools = next(line for line in rows.splitlines() if "file tools" in line)
        if agent == "command":
            assert "the command agent has no tool-call hook" in tools and "PreToolUse" not in tools, tools
        else:
            assert "Claude Code's Read/Write/Edit are held by nightshift's PreToolUse hook" in tools, tools


def story(agent: str | None, namespace: bool, hook_line: str, claude_sandbox: bool = False) -> str:
    data = {"available": namespace, "namespace": namespace, "problem": None if namespace else "bwrap missing",
            "claude_sandbox": claude_sandbox, "pretool_hook_line": hook_line}
    if agent:
        data["agent"] = agent
    return describe({"type": "policy.sandbox", "shift": None, "data": data})


def test_the_storys_boundary_line_is_true_for_each_agent_kind():
    hook = "Claude Code's tool calls are decided over an HTTP hook (to the helper; fails closed)"
    assert story("claude", True, hook) == f"the agent's processes run in nightshift's namespace (bubblewrap); {hook}"
    assert "with Claude Code's own sandbox inside it" in story("claude", True, hook, claude_sandbox=True)
    assert story("claude", False, hook).startswith("no namespace for the agent's processes: bwrap missing")
    for agent in ("command", "demo"):
        on, off = story(agent, True, ""), story(agent, False, "")
        assert on == (f"the agent's processes run in nightshift's namespace (bubblewrap); the {agent} agent has no "
                      "tool-call hook: the namespace and the check at each stop hold the rules")
        assert off.endswith("only the check at each stop holds the rules") and "namespace (bubblewrap)" not in off
        assert "Claude Code" not in on + off
    # an event written before the agent was recorded: its hook line named the agent
    old = story(None, True, "Claude Code's tool calls are decided by a command hook: the demo agent has no "
                            "PreToolUse hook")
    assert "the demo agent has no tool-call hook" in old and "Claude Code" not in old, old
