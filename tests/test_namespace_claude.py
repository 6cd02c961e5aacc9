"""Issue 21 with the real Claude Code CLI (only the model is faked), from `nightshift init` defaults: the agent's
whole turn runs in nightshift's namespace. Interactive in a tmux pane, attached from a terminal as a user does: a
held-out reference does not exist for its shell, and the run ends done. Headless with `[policy] network = false`:
the model's API is reached through nightshift's proxy and nothing else is (a server on the host's loopback is out
of reach)."""
from __future__ import annotations

import json
import sys
import socket
import subprocess
import threading
import uuid
from pathlib import Path

from nightshift.supervisor.cli.watch.attach import attach_argv
from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import require_tool, wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace


def _held(tmp_path):
    held = tmp_path / "held" / f"held-{uuid.uuid4().hex[:8]}.txt"
    held.parent.mkdir()
    held.write_text("SECRET-ANSWERS\n")
    return held


def test_interactive_claude_runs_inside_the_namespace_and_can_be_attached(workspace, fake_claude, tmp_path):
    need_namespace()
    require_tool("tmux")
    fake, seed = fake_claude
    ws = workspace.path
    held = _held(tmp_path)
    host_mark = Path("/tmp") / f"host-only-{uuid.uuid4().hex[:8]}"
    host_mark.write_text("")
    seed(ws, mode="interactive", backend="tmux", extra=f'\n[policy]\nhide = ["{held}"]\n')
    # the path is put together at run time, so only the namespace (not the hook's reading of the command) holds it
    head, tail = str(held)[:8], str(held)[8:]
    probe = f"python3 -c \"print(open('{head}' + '{tail}').read())\" > probe.txt 2>&1; ls /tmp > tmp.txt"
    fake.push(tools(bash(probe)), tools(write(str(ws / "check.txt"), "ok"), bash(claim("made it"))), text("done"))
    run = create_run(ws, resolve_config(ws))
    result: list[int] = []
    threading.Thread(target=lambda: result.append(run_foreground(run, say=lambda _: None)), daemon=True).start()
    outer = f"outer-{uuid.uuid4().hex[:8]}"  # a user's terminal: its own tmux server on a private socket
    try:
        wait_for(lambda: '"agent.started"' in run.events.read_text(), timeout=60, what="the agent's pane")
        subprocess.run(["tmux", "-L", outer, "new-session", "-d", "-x", "200", "-y", "50",
                        " ".join(attach_argv(run))], check=True)
        def screen() -> str:
            seen.append(subprocess.run(["tmux", "-L", outer, "capture-pane", "-p"], capture_output=True,
                                       text=True).stdout)
            return seen[-1]
        seen: list[str] = []
        wait_for(lambda: "made it" in screen() or bool(result), timeout=90,
                 what="the agent's screen through the attached terminal")
        wait_for(lambda: bool(result), timeout=120, what="the run to end")
    finally:
        subprocess.run(["tmux", "-L", outer, "kill-server"], capture_output=True)
        host_mark.unlink()
    assert result == [0]
    assert "SECRET-ANSWERS" not in (ws / "probe.txt").read_text() and "No such file" in (ws / "probe.txt").read_text()
    assert any("made it" in shot for shot in seen)  # the attached terminal showed the agent inside the namespace
    assert host_mark.name not in (ws / "tmp.txt").read_text()  # a private /tmp: nothing of the host's
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    sandbox = next(e["data"] for e in evs if e["type"] == "policy.sandbox")
    assert sandbox["namespace"] is True and sandbox["claude_sandbox"] is False
    assert "bwrap" in run.turn_file(1, 1, "sh").read_text()


def test_network_off_reaches_only_the_models_api(workspace, fake_claude, tmp_path):
    need_namespace()
    fake, seed = fake_claude
    ws = workspace.path
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    seed(ws, mode="headless", backend="local", extra="\n[policy]\nnetwork = false\n")
    reach = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\" > net.txt 2>&1"
    fake.push(tools(bash(reach)), tools(write(str(ws / "check.txt"), "ok"), bash(claim("offline"))), text("done"))
    run = create_run(ws, resolve_config(ws))
    try:
        assert run_foreground(run, say=lambda _: None) == 0
        try:
            listener.accept()
            reached = True
        except (TimeoutError, socket.timeout):
            reached = False
    finally:
        listener.close()
    assert not reached
    assert "Error" in (ws / "net.txt").read_text()  # refused inside: the host's loopback is not there
    assert len([r for r in fake.requests if r.kind == "script"]) >= 3  # every model call went through the proxy
    inner = run.turn_file(1, 1, "inner.sh").read_text()
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:" in inner and "--unshare-net" in run.turn_file(1, 1, "sh").read_text()


def test_a_test_that_passes_mid_shift_is_protected_before_the_next_launch(workspace, fake_claude):
    """An interactive session lives across push-backs: a test that passed at its first stop is refused to the same
    session's next edit (the hook's policy is refreshed at the verdict, not at the next launch)."""
    require_tool("tmux")
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="interactive", backend="tmux")
    config = (ws / "nightshift.toml").read_text().replace(
        'test_command = "test \\"$(cat check.txt)\\" = ok"', f'test_command = "{sys.executable} -m pytest -q tests"')
    (ws / "nightshift.toml").write_text(config)
    (ws / "tests").mkdir(exist_ok=True)  # the suite the command names is there at the start (#46 refuses one that is not)
    (ws / "tests" / "test_start.py").write_text("def test_start():\n    pass\n")
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "pytest"], cwd=ws, check=True)
    test_file = str(ws / "tests" / "test_ok.py")
    honest = "def test_ok():\n    assert open('check.txt').read() == 'ok'\n"
    fake.push(tools(write(test_file, honest), write(str(ws / "check.txt"), "ok")), text("tests pass"),
              tools(write(test_file, "def test_ok():\n    pass\n"), match="Stop hook feedback"),
              tools(bash(claim("done, test kept"))), text("done"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    denied = [e["data"] for e in evs if e["type"] == "policy.denied"]
    assert any(d["rule"] == "tests" and "test_ok.py" in str(d["input"]) for d in denied), denied
    assert [e["type"] for e in evs].count("agent.started") == 1  # the same session throughout
    assert (ws / "tests" / "test_ok.py").read_text() == honest
