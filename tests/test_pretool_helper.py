"""The resident PreToolUse helper (shift/pretool_server.py) through the real turn wrapper: bubblewrap, the helper
outside, its socket read-only inside. It decides as the hook does (same refusal, recorded), the agent can neither
replace its socket nor end it, and a hook whose helper is gone still decides (the plain hook, payload intact)."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from nightshift.supervisor.agents.claude_settings import pretool_command
from nightshift.supervisor.config.schema import parse_config
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.sandbox.boundary import boundary_for
from nightshift.supervisor.sandbox.turn import turn_namespace
from tests.fixtures_core import require_tool
from tests.fixtures_namespace import need_namespace


def _turn(tmp_path: Path, inside: str) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """Run ``inside`` as a Claude turn's command would run (the wrapper's prologue, bwrap, the epilogue)."""
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True, exist_ok=True)
    (ws / "reference" / "cl.dat").write_text("1 2\n")
    (ws / "nightshift.toml").write_text('goal = "g"\n[agent]\nkind = "claude"\n')
    config = parse_config((ws / "nightshift.toml").read_text())
    run = RunPaths(ws / ".nightshift" / "runs" / "r1")
    run.root.mkdir(parents=True)
    policy = {"workspace": str(ws), "plan": str(ws / "CLAUDE.md"), "writable": [], "network": True,
              "sandbox": False, "hide": [],
              "protect": [[str(ws / "reference" / "cl.dat"), "references", "your edit of {path} was refused"]]}
    (run.root / "policy.json").write_text(json.dumps(policy))
    ns = turn_namespace(boundary_for(ws, config, run.root), run, 1, "s1t1", [], decisions=True)
    inner = run.root / "inner.sh"  # where the real one is: the host's /tmp is not seen inside
    inner.write_text(ns.inside + inside)
    script = ("export NIGHTSHIFT_RUN_DIR=%s NIGHTSHIFT_TOKEN=tok NIGHTSHIFT_SHIFT=1\n" % run.root + ns.prologue
              + shlex.join(ns.argv) + f" bash {inner}\nstatus=$?\n" + ns.epilogue + "exit $status\n")
    out = subprocess.run(["bash", "-c", script], cwd=ws, capture_output=True, text=True, timeout=60)
    return out, ws, run.root


def _call(path: str) -> str:
    return json.dumps({"tool_name": "Write", "tool_input": {"file_path": path, "content": "x" * 3_000_000},
                       "cwd": "/"})


def test_the_helper_decides_inside_and_cannot_be_replaced(tmp_path):
    need_namespace()
    require_tool("socat")
    hook = pretool_command()
    target = tmp_path / "ws" / "reference" / "cl.dat"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "payload.json").write_text(_call(str(target)))
    (tmp_path / "ws" / "hook.sh").write_text(hook)
    inside = ("echo \"socket=$NIGHTSHIFT_PRETOOL_SOCKET\"\n"
              "sh hook.sh < payload.json\n"
              "rm -f /tmp/.pretool/s 2>/dev/null && echo REPLACED\n"
              "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"/tmp/.pretool/x\")' 2>/dev/null "
              "&& echo BOUND\ntrue\n")
    out, ws, run_dir = _turn(tmp_path, inside)
    assert out.returncode == 0, out.stderr
    assert "socket=/tmp/.pretool/s" in out.stdout
    decision = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "REPLACED" not in out.stdout and "BOUND" not in out.stdout  # its folder is read-only inside
    [record] = [json.loads(p.read_text()) for p in (run_dir / "refusals").glob("*.json")]
    assert record["rule"] == "references" and record["decided_by"] == "helper" and record["shift"] == "1"


def test_a_hook_whose_helper_is_gone_decides_alone(tmp_path):
    """The socket file is there but nothing listens (the helper died): socat fails before reading the payload, and
    the plain hook reads it whole and refuses."""
    need_namespace()
    require_tool("socat")
    hook = pretool_command()
    target = tmp_path / "ws" / "reference" / "cl.dat"
    stale = tmp_path / "stale"
    stale.mkdir()
    subprocess.run([sys.executable, "-c", f"import socket; socket.socket(socket.AF_UNIX).bind({str(stale / 's')!r})"],
                   check=True)
    env_run = tmp_path / "run"
    env_run.mkdir()
    (env_run / "policy.json").write_text(json.dumps({
        "workspace": str(tmp_path / "ws"), "plan": "", "writable": [], "network": True, "sandbox": False, "hide": [],
        "protect": [[str(target), "references", "refused"]]}))
    out = subprocess.run(["sh", "-c", hook], input=_call(str(target)), capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "NIGHTSHIFT_RUN_DIR": str(env_run), "NIGHTSHIFT_TOKEN": "t",
                              "NIGHTSHIFT_PRETOOL_SOCKET": str(stale / "s")})
    assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", out
    [record] = [json.loads(p.read_text()) for p in (env_run / "refusals").glob("*.json")]
    assert record["decided_by"] == "hook"
