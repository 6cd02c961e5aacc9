"""Issue 21, bad input at the boundary: each gets one line naming the thing and the fix, a non-zero exit or a held
run with the reason as an event, nothing recorded lost, never a traceback: a held-out reference inside the
workspace; held-out comparisons where no namespace can be made (fail closed unless [policy] heldout =
"unprotected"); a [policy] that contradicts itself; an agent whose config folder does not exist; a test command
that needs the network; a reference that is a symlink out of the workspace."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.fixtures_core import nightshift, supervise, wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import HONEST, need_namespace, oracle_block, setup_references


def _bin_without_bwrap(tmp_path: Path) -> str:
    """A PATH with everything a run needs but bubblewrap: a machine whose admins did not install it."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("git", "tmux", "bash", "python3", "sh", "env", "cat", "ls", "mkdir", "cp", "sleep", "test"):
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    return f"{bindir}:{Path(sys.executable).parent}"


def _no_runs(ws: Path) -> bool:
    return not list((ws / ".nightshift" / "runs").glob("*")) if (ws / ".nightshift" / "runs").exists() else True


def test_a_held_out_reference_inside_the_workspace_is_refused_before_anything_is_created(workspace, tmp_path):
    ws = workspace.path
    setup_references(ws, tmp_path)
    (ws / "secret").mkdir()
    (ws / "secret" / "held.dat").write_text("# 1:x 2:y\n1 2\n")
    workspace.configure({"default": [["claim", "done", "x"]]}, backend="local", extra=oracle_block("secret/held.dat"))
    out = nightshift("run", str(ws), "--no-check")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert "held-out reference secret/held.dat is inside the workspace" in line and "move it out" in line
    assert _no_runs(ws)


def test_held_out_data_without_a_boundary_that_hides_it_fails_closed_unless_the_user_accepts_it(workspace, tmp_path):
    """Issue 47: without bubblewrap the run takes Landlock's tier, which hides held-out data (tests/
    test_sandbox_login_node.py runs it); where nothing hides it ([policy] sandbox = "off" here, a kernel without
    Landlock elsewhere) a held-out run fails closed, in one line, unless the user accepts it; `required` refuses any
    tier weaker than full by name."""
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    path = _bin_without_bwrap(tmp_path)
    workspace.configure({"default": [["write", "solver.py", HONEST], ["claim", "done", "x"]]}, backend="local",
                        extra='[policy]\nsandbox = "required"\n' + oracle_block(str(held)))
    out = nightshift("run", str(ws), "--no-check", env={"PATH": path})
    assert out.returncode != 0 and "Traceback" not in out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert '[policy] sandbox = "required" but this machine gives sandbox: landlock' in line, line
    assert "bubblewrap is not installed; fix: apt-get install bubblewrap" in line and 'sandbox = "landlock"' in line
    workspace.configure({"default": [["write", "solver.py", HONEST], ["claim", "done", "x"]]}, backend="local",
                        extra='[policy]\nsandbox = "off"\n' + oracle_block(str(held)))
    out = nightshift("run", str(ws), "--no-check", env={"PATH": path})
    assert out.returncode != 0 and "Traceback" not in out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert 'held-out comparisons cannot be protected here ([policy] sandbox = "off")' in line
    assert '[policy] heldout = "unprotected"' in line and _no_runs(ws)
    # the user says so in one line: the run starts, and every verdict says the held-out data was not protected
    workspace.configure({"default": [["write", "solver.py", HONEST], ["write", "check.txt", "ok"],
                                     ["claim", "done", "x"]]}, backend="local",
                        extra='[policy]\nsandbox = "off"\nheldout = "unprotected"\n' + oracle_block(str(held)))
    out = nightshift("run", str(ws), "--no-check", "--foreground", env={"PATH": path}, timeout=300)
    assert out.returncode == 0, (out.stdout + out.stderr)[-1500:]
    # said before the first turn starts: the tier and why
    assert 'boundary: sandbox: off (none), weaker than full: [policy] sandbox = "off"' in out.stdout, out.stdout
    from nightshift.supervisor.run.paths import RunPaths
    run = RunPaths(next((ws / ".nightshift" / "runs").iterdir()))
    sandbox = [e["data"] for e in workspace.events(run) if e["type"] == "policy.sandbox"][0]
    assert sandbox["namespace"] is False and any("can read held-out references" in d for d in sandbox["doors"])
    assert sandbox["tier"] == "off"
    verdict = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"][-1]
    assert "[held-out references not protected from the solver on this machine]" in verdict["summary"]
    assert verdict["summary"].endswith("; sandbox: off (none)") and verdict["sandbox"] == "off", verdict["summary"]
    status = nightshift("status", run.run_id, cwd=ws).stdout
    assert "trust      yes, within a weaker boundary: verified done" in status and "sandbox: off" in status, status


@pytest.mark.parametrize("policy,needle", [
    ("network = false\ncommand_network = true", "command_network = true with network = false"),
    ('sandbox = "required"\nheldout = "unprotected"', 'sandbox = "required" with heldout = "unprotected"'),
])
def test_a_policy_that_contradicts_itself_is_one_line(workspace, policy, needle):
    workspace.configure({"default": []}, backend="local", extra=f"[policy]\n{policy}\n")
    out = nightshift("run", str(workspace.path), "--no-check")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert "nightshift.toml" in line and needle in line, line
    assert _no_runs(workspace.path)


def test_an_agent_whose_config_folder_is_missing_holds_the_run_with_the_fix(workspace, tmp_path, monkeypatch):
    need_namespace()
    ws = workspace.path
    missing = tmp_path / "no-claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(missing))
    workspace.configure({}, backend="local", extra="")
    text = (ws / "nightshift.toml").read_text().replace('kind = "command"', 'kind = "claude"\nmode = "headless"', 1)
    (ws / "nightshift.toml").write_text(text)
    run = workspace.create_run()
    proc = nightshift_supervise(run)
    try:
        wait_for(lambda: "run.paused" in workspace.types(run), timeout=60, what="the run held")
    finally:
        nightshift("stop", run.run_id)
        proc.wait(timeout=60)
    paused = [e["data"] for e in workspace.events(run) if e["type"] == "run.paused"][0]
    assert str(missing) in paused["reason"] and "CLAUDE_CONFIG_DIR" in paused["reason"], paused
    assert "agent.started" not in workspace.types(run)


def nightshift_supervise(run):
    import subprocess
    return subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_a_test_command_that_needs_the_network_is_told_why_and_the_fix(workspace):
    need_namespace()
    probe = (f"{sys.executable} -c \"import socket; socket.getaddrinfo('example.org', 80)\"")
    workspace.configure({"default": [["write", "check.txt", "ok"], ["claim", "done", "x"]]}, backend="local",
                        test_command=probe, pushbacks=1, max_shifts=1)
    run = workspace.create_run()
    proc = nightshift_supervise(run)
    try:
        wait_for(lambda: {"run.paused", "run.finished"} & set(workspace.types(run)), timeout=90, what="the run")
    finally:
        nightshift("stop", run.run_id)
        proc.wait(timeout=60)
    verdict = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"][0]
    tests = next(c for c in verdict["checks"] if c["name"] == "tests")
    assert any("tried to reach the network" in line and "command_network = true" in line for line in tests["lines"])


def test_a_reference_that_is_a_symlink_out_of_the_workspace_is_hidden_at_its_target(workspace, tmp_path):
    need_namespace()
    from nightshift.supervisor.sandbox.boundary import boundary_for_oracle, notes
    from nightshift.supervisor.verify.oracle import run_oracle
    from tests.fixtures_oracle import oracle

    ws = workspace.path
    target = tmp_path / "elsewhere" / "ref.dat"
    target.parent.mkdir()
    target.write_text("# 1:x 2:y\n1 1\n2 4\n3 9\n")
    (ws / "reference").mkdir()
    (ws / "reference" / "ref.dat").symlink_to(target)
    cmd = f"mkdir -p out && (cat {target} > out/leak.txt; true) && printf '# 1:x 2:y\\n1 1.0000001\\n2 4\\n3 9\\n' > out/c.dat"
    cfg = oracle({"name": "y", "candidate": "out/c.dat", "reference": "reference/ref.dat", "x": "x",
                  "columns": ["y"], "rtol": 1e-3}, command=cmd)
    boundary = boundary_for_oracle(ws, cfg)
    assert any("is a symlink to" in n and "outside the workspace" in n for n in notes(boundary))
    out = run_oracle(cfg, ws, tmp_path / "o", None, boundary=boundary)
    assert (ws / "out" / "leak.txt").read_text() == ""  # the file it points to was absent too
    assert out.passed, out.summary
