"""Bad input gets one line naming the thing and the fix, a non-zero exit, no traceback, nothing lost."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.config.schema import ConfigError, parse_config
from nightshift.supervisor.run.events import EventLog, EventLogError, read_events
from tests.fixtures_core import mount_tmpfs, nightshift, require_tool, supervise, unmount, wait_for
from tests.fixtures_core import workspace  # noqa: F401


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_malformed_and_unknown_keys_name_the_line_and_key(workspace):
    toml = workspace.path / "nightshift.toml"
    text = toml.read_text()
    toml.write_text(text.replace("max_shifts = 20", "max_shifts = \"lots\""))
    line = text.splitlines().index("max_shifts = 20") + 1
    one_line_error(nightshift("run", str(workspace.path)), f"nightshift.toml line {line}", "limits.max_shifts")
    toml.write_text(text.replace("[limits]", "[limits]\nmax_shfts = 3"))
    one_line_error(nightshift("run", str(workspace.path)), "unknown key limits.max_shfts", "spelling")
    toml.write_text(text + "\n[oops\n")
    one_line_error(nightshift("run", str(workspace.path)), "not valid TOML")
    assert not (workspace.path / ".nightshift" / "runs").exists()  # nothing half-created


@pytest.mark.parametrize("text, needle", [
    ('[[oracle.compare]]\nname = "a"\ncandidate = "c"\nreference = "r"\nrtol = "tight"\n',
     "line 5: oracle.compare[0].rtol"),
    ('[verify]\ntimeout = "3 weeks"\n', "line 2: verify.timeout"),
    ('[agent]\nkind = "gpt"\n', "line 2: agent.kind"),
    # a table the schema does not know is named where it starts, not at the header of the table around it
    ('[oracle]\ncommand = "a"\n\n[oracle.x]\ny = 1\n', "line 4: unknown key oracle.x"),
    ('[oracle]\ncommand = "a"\nx.y = 1\n', "line 3: unknown key oracle.x"),
    # the second block of an array of tables, a quoted dotted key, a table under an array's last block
    ('[[oracle.compare]]\nname = "a"\ncandidate = "c"\nreference = "r"\n[[oracle.compare]]\nname = "b"\n'
     'candidate = "c"\nreference = "r"\nrtol = "tight"\n', "line 9: oracle.compare[1].rtol"),
    ('[[oracle.compare]]\nname = "a"\ncandidate = "c.h5"\nreference = "r.h5"\nfields = ["/u"]\n'
     'per_field."/u" = { rtol = "x" }\n', "line 6: oracle.compare[0].per_field./u.rtol"),
    ('[[oracle.compare]]\nname = "a"\ncandidate = "c"\nreference = "r"\n[oracle.compare.per_column.TT]\n'
     'rtl = 1\n', "line 6: unknown key oracle.compare[0].per_column.TT.rtl"),
])
def test_config_errors_point_at_the_key(text, needle):
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert needle in str(err.value)


def test_missing_workspace_unknown_run_and_outside_a_shift():
    one_line_error(nightshift("run", "/nonexistent/ws"), "/nonexistent/ws", "does not exist")
    one_line_error(nightshift("status", "nosuchrun"), "run nosuchrun not found", "nightshift ls")
    one_line_error(nightshift("claim", "done", "--summary", "x",
                              env={"NIGHTSHIFT_RUN_DIR": "", "NIGHTSHIFT_TOKEN": ""}), "inside a nightshift shift")


def test_tmux_missing_is_named_with_the_fix(workspace, tmp_path):
    workspace.configure({"default": []})
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("git", "bash"):
        (bindir / tool).symlink_to(shutil.which(tool))
    proc = nightshift("run", str(workspace.path), env={"PATH": str(bindir)})
    one_line_error(proc, "tmux not found", "apt-get install tmux")


def test_a_second_supervisor_on_the_same_run_is_refused(workspace):
    ws = workspace.configure({"default": [["sleep", "30"]]})
    run = ws.create_run()
    first = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "agent.started" in ws.types(run), what="the first supervisor")
        before = run.events.read_bytes()
        second = supervise(run, timeout=30)
        one_line_error(second, "already supervised", f"nightshift stop {run.run_id}")
        assert run.events.read_bytes() == before  # the second one wrote nothing
    finally:
        first.kill()
        first.wait()


def test_init_refuses_to_overwrite_without_force(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert nightshift("init", str(plain), "--goal", "g").returncode == 0
    assert (plain / ".git").is_dir()  # a plain folder became a git repository
    (plain / "CLAUDE.md").write_text("my own plan")
    one_line_error(nightshift("init", str(plain)), "CLAUDE.md already exists", "--force")
    assert (plain / "CLAUDE.md").read_text() == "my own plan"
    assert nightshift("init", str(plain), "--force").returncode == 0


def test_full_disk_while_appending_loses_nothing_recorded(tmp_path):
    mnt = tmp_path / "tiny"
    mount_tmpfs(mnt, "16k")
    try:
        log = EventLog(mnt / "events.jsonl")
        written = 0
        with pytest.raises(EventLogError) as err:
            for _ in range(10_000):
                log.append("filler.added", None, blob="x" * 200)
                written += 1
        assert "disk full" in str(err.value) and "nightshift resume" in str(err.value)
        result = read_events(mnt / "events.jsonl")
        assert len(result.events) == written and not result.warnings  # no torn line left behind
        log.close()
    finally:
        unmount(mnt)


def test_an_agent_command_that_does_not_exist_is_a_failed_turn_not_a_crash(workspace):
    ws = workspace.configure({"default": []}, pushbacks=0, max_shifts=1)
    toml = ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace(f'command = "{sys.executable} agent.py"',
                                             'command = "no-such-agent-binary {prompt_file}"'))
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), what="the budget pause")
        stop = next(e["data"] for e in ws.events(run) if e["type"] == "agent.stopped")
        assert stop["reason"] == "exit" and stop["exit_code"] == 127
        assert "command not found" in run.turn_file(1, 1, "log").read_text()
        assert proc.wait(timeout=60) == 1  # held by its budget: its supervisor ends (README: `stop RUN`)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("ci", [True, False], ids=["ci", "elsewhere"])
def test_a_tmpfs_that_cannot_be_mounted_fails_in_ci_and_skips_loudly_elsewhere(ci, tmp_path):
    """The full-disk and read-only tests need a real tmpfs: without CAP_SYS_ADMIN (dropped here with setpriv, as
    an unprivileged container has it) the mount is refused, and CI must not pass by skipping them."""
    require_tool("setpriv")
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": "true"} if ci else {})
    test = "tests/test_harden_small.py::test_a_read_only_workspace_is_one_line"  # it skipped even in CI before
    out = subprocess.run(["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", sys.executable, "-m",
                          "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t"), test],
                         capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parent.parent,
                         timeout=120)
    if ci:
        assert out.returncode == 1 and "required in CI but could not be mounted" in out.stdout, out.stdout[-2000:]
    else:
        assert out.returncode == 0 and "1 skipped" in out.stdout and "SKIPPED LOUDLY" in out.stdout, out.stdout[-2000:]
