"""Issue 37 with the real Claude Code CLI (only the model is faked), from `nightshift init` defaults: the agent's Bash
tool runs the sandbox's probes (supervisor/sandbox/surfaces.py) from inside its turn, with the user's doors set up
outside (an ssh key in $HOME, a tmux server and an agent socket there, the socket variables set), and every surface
is closed; the honest work still ends the run done. Headless (its own session) and interactive in a tmux pane (its
terminal kept, TIOCSTI refused by the filter)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.run.own_python import bare_code
from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import require_tool, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace
from tests.test_sandbox_surfaces import stranger_home  # noqa: F401



def _probe_command(plan_file: Path, out: Path) -> str:
    code = bare_code("nightshift.supervisor.sandbox.surfaces")
    return f"{sys.executable} -S -E -P -c \"{code}\" {plan_file} > {out} 2>&1"


@pytest.mark.parametrize("mode,backend", [("headless", "local"), ("interactive", "tmux")])
def test_claude_codes_tool_calls_meet_a_closed_sandbox(workspace, fake_claude, stranger_home, mode,  # noqa: F811
                                                         backend):
    need_namespace()
    if backend == "tmux":
        require_tool("tmux")
    from nightshift.supervisor.config.schema import load_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.sandbox.survey import plan

    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode=mode, backend=backend)
    todo = plan(boundary_for(ws, load_config(ws)), session=mode == "headless")
    assert todo["sockets"] and todo["credentials"] and todo["abstract"]  # the turn has the machine's network
    plan_file = ws / "probe-plan.json"  # in the workspace: the host's /tmp (where pytest keeps tmp_path) is not inside
    plan_file.write_text(json.dumps(todo))
    out = ws / "surfaces.jsonl"
    fake.push(tools(bash(_probe_command(plan_file, out))),
              tools(write(str(ws / "check.txt"), "ok"), bash(claim("probed"))), text("done"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    found = {}
    for line in out.read_text().splitlines():
        item = json.loads(line)
        found[item["surface"]] = item
    expected = {"capabilities", "mounts", "unix sockets", "abstract sockets", "socket environment", "terminals and /dev", "/dev/shm",
                "TIOCSTI", "syscalls", "credentials", "processes", "host /tmp"} | ({"session"} if mode == "headless" else set())
    assert set(found) == expected, found
    for name, item in found.items():
        assert item["closed"], item
    assert not (Path("/dev/shm") / todo["marker"]).exists()  # the turn's /dev/shm was its own
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    assert [e["data"]["outcome"] for e in evs if e["type"] == "run.finished"] == ["done"]
