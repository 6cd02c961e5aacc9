"""The goal's tests with the real Claude Code CLI (only the model is faked), from `nightshift init` defaults and a
goal stated as tests that fail when the run begins (issue #36): the agent's Edit of a goal test is refused, a write
to it from its shell fails in the namespace (read-only there), the verdict still fails on the goal's tests, the
push-back names the refusal, and the honest fix ends done with the test file untouched."""
from __future__ import annotations

import json
import subprocess

from nightshift.supervisor.shift.launcher import create_run, resolve_config
from tests.fake_anthropic import bash, text, tool, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_goal_tests import HONEST, TEST_COMMAND, TEST_LIB, write_suite
from tests.fixtures_namespace import need_namespace
from tests.test_policy_claude import run_to_the_end, tool_results


def test_claudes_edit_of_a_goal_test_is_refused_and_named_in_the_push_back(workspace, fake_claude):
    need_namespace()
    fake, seed = fake_claude
    ws = workspace.path
    write_suite(ws)
    seed(ws, mode="headless", backend="local")
    config = (ws / "nightshift.toml").read_text()
    start = config.index("test_command = ")
    end = config.index("\n", start)
    (ws / "nightshift.toml").write_text(config[:start] + f"test_command = {json.dumps(TEST_COMMAND)}" + config[end:])
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "tests as the goal"],
                   cwd=ws, check=True)
    goal_test = str(ws / "tests" / "test_lib.py")
    # the path is put together at run time, so only the namespace (not the hook's reading of the command) holds it
    shell_write = ("python3 -c \"open('tests/' + 'test_lib.py', 'w').write('def test_add_small():\\n    assert True\\n')\""
                   " > shell.txt 2>&1")
    fake.push(tools(tool("Edit", {"file_path": goal_test, "old_string": "assert add(2, 2) == 4",
                                  "new_string": "assert add(2, 2) == add(2, 2)"})),
              tools(bash(shell_write)),
              tools(bash(claim("the goal tests pass now"))), text("done"),
              tools(write(str(ws / "lib" / "__init__.py"), HONEST), match="refused by the run's policy"),
              tools(bash(claim("fixed add"))), text("really done"))
    run = create_run(ws, resolve_config(ws))
    assert run_to_the_end(run, timeout=300) == 0, run.events.read_text()[-3000:]
    assert (ws / "tests" / "test_lib.py").read_text() == TEST_LIB
    assert "Read-only file system" in (ws / "shell.txt").read_text()  # the namespace held the shell's write
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    denied = [e["data"] for e in evs if e["type"] == "policy.denied"]
    assert any(d["rule"] == "tests" and "tests/test_lib.py" in d["message"] for d in denied), denied
    refused = [r for r in tool_results(fake) if r["error"]]
    assert any("the user's tests" in r["text"] and "claim blocked" in r["text"] for r in refused), refused
    pushed = [r.last_user_text() for r in fake.requests if "refused by the run's policy" in (r.last_user_text() or "")]
    assert pushed and "tests/test_lib.py" in pushed[0], pushed[:1]
    first = next(e["data"] for e in evs if e["type"] == "verify.finished")
    assert not first["passed"] and "FAIL tests/test_lib.py::test_add_small" in json.dumps(first)
    assert evs[-1]["type"] == "run.finished" and evs[-1]["data"]["outcome"] == "done"
