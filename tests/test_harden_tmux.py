"""A run survives the death of its tmux server, never acts on a target of a dead server (pane ids are reused
by the next server: `%0` may be the supervisor's own window), and ends its server when the run ends."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from nightshift.supervisor.backends.base import LaunchSpec
from nightshift.supervisor.backends.tmux import TmuxBackend
from pathlib import Path

from tests.fixtures_core import nightshift, require_tool, wait_for, workspace  # noqa: F401

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def server_alive(socket: str) -> bool:
    return subprocess.run(["tmux", "-L", socket, "ls"], capture_output=True).returncode == 0


def supervisor_pid(run) -> int:
    return json.loads(run.supervisor.read_text())["pid"]


def test_a_target_of_a_dead_server_is_never_acted_on(tmp_path):
    require_tool("tmux")
    socket = f"ns-test-{os.getpid()}"
    backend = TmuxBackend(socket, "x")
    files = {k: tmp_path / f"t.{k}" for k in ("sh", "log", "started", "exit")}
    spec = LaunchSpec(run_id="x", shift=1, turn=1, command="sleep 60", cwd=tmp_path, wrapper=files["sh"],
                      log_file=files["log"], started_file=files["started"], exit_file=files["exit"])
    try:
        old = backend.launch(spec)
        assert old["server"] and backend.is_alive(old)
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=True)
        wait_for(lambda: not server_alive(socket), 30, what="the old server to end")
        # A new server on the same socket: its first pane is %0 again, as the old target's was.
        wait_for(lambda: subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "victim",
                                                         "echo VICTIM-SCREEN; sleep 60"],
                                        capture_output=True).returncode == 0, 30, what="a new server")
        victim = subprocess.run(["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id}"], capture_output=True,
                                text=True).stdout.split()
        assert old["pane"] in victim  # the reuse the identity guards against
        victim_target = {**old, "server": backend.server_identity()}
        from nightshift.tui.widgets.agent_tail import capture_pane
        wait_for(lambda: "VICTIM-SCREEN" in (capture_pane(victim_target) or ""), 30, what="the victim's screen")
        assert not backend.is_alive(old)
        backend.terminate(old)
        assert not backend.send_text(old, "rm -rf ~")
        assert "VICTIM-SCREEN" not in backend.capture(old)
        assert capture_pane(old) is None  # the TUI does not show the new server's %0 as the agent's screen
        assert backend.owns(victim_target)  # the identity itself is what tells them apart
        assert not backend.owns({**victim_target, "host": "another-node"})  # a pid means nothing elsewhere
        assert subprocess.run(["tmux", "-L", socket, "has-session", "-t", "victim"]).returncode == 0
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def test_kill_9_and_a_dead_tmux_server_then_resume_finishes_in_a_fresh_shift(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "120"]], "s2t1": FIX})
    run = ws.create_run()
    run_id, socket = run.run_id, f"ns-{run.run_id}"
    # A supervisor outside the run's server (`run --foreground`, a batch job): the agent's pane is that
    # server's %0, the id the supervisor's own pane gets in the server `nightshift resume` starts.
    first = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                             cwd=ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: "agent.started" in ws.types(run), 60, what="the agent to start")
    assert ws.events(run)[-1]["data"]["target"]["pane"] == "%0"
    first.send_signal(signal.SIGKILL)  # the supervisor dies while the agent works...
    first.wait()
    subprocess.run(["tmux", "-L", socket, "kill-server"], check=True)  # ...and so does the whole tmux server
    wait_for(lambda: not server_alive(socket), 30, what="the tmux server to go")

    resumed = nightshift("resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: "run.finished" in ws.types(run), 120, what="the run to finish")
    events = ws.events(run)
    types = [e["type"] for e in events]
    assert events[-1]["data"]["outcome"] == "done", types
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["shift"] for e in events if e["type"] == "shift.started"] == [1, 2]  # a fresh shift, none doubled
    lost = [e for e in events if e["type"] == "agent.stopped" and e["shift"] == 1]
    assert [e["data"]["reason"] for e in lost] == ["lost"]
    adopted = next(e for e in events if e["type"] == "agent.adopted")
    assert adopted["data"]["alive"] is False  # the old target was not mistaken for the new server's %0
    assert "supervisor.crashed" not in types
    # Item 5: the run's server ends with the run; its last lines stay in the log.
    wait_for(lambda: not server_alive(socket), 30, what="the run's tmux server to end with the run")
    assert "run done" in run.supervisor_log.read_text()
    listing = nightshift("ls").stdout
    assert run_id in listing and "done" in listing.split(run_id)[1].splitlines()[0]


IGNORES_HUP = "(trap '' HUP TERM; exec sleep 300) >/dev/null 2>&1 &"  # a child that ignores its pane's hangup


def _kill_supervisor_and_server(ws, extra: str = ""):
    """Shift 1's agent starts a child that ignores SIGHUP; the supervisor is killed -9 and the run's tmux server is
    killed under the agent. Returns the run."""
    from nightshift.supervisor.run.liveness import processes_of_shift
    ws.configure({"s1t1": [["shell", IGNORES_HUP], ["sleep", "120"]], "s2t1": FIX}, extra=extra)
    run = ws.create_run()
    first = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                             cwd=ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any("sleep" in _cmdline(p) for p in processes_of_shift(run.root, 1)), 60,
                 what="the agent's child to start")
    finally:
        first.kill()
        first.wait()
    subprocess.run(["tmux", "-L", f"ns-{run.run_id}", "kill-server"], check=True)
    wait_for(lambda: not server_alive(f"ns-{run.run_id}"), 30, what="the tmux server to go")
    return run


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_an_agent_process_that_outlives_its_dead_server_is_ended_before_the_next_shift(workspace):
    """Without nightshift's namespace (sandbox = "off"), the child that ignored the hangup outlives its server: the
    next supervisor finds it by its environment and ends it before shift 2."""
    from nightshift.supervisor.run.liveness import processes_of_shift
    from tests.fixtures_core import supervise

    run = _kill_supervisor_and_server(workspace, extra='[policy]\nsandbox = "off"\n')
    try:
        survivor = wait_for(lambda: (found := processes_of_shift(run.root, 1)) and len(found) == 1 and found, 30,
                            what="only the child that ignored SIGHUP to remain")
        done = supervise(run)
        assert done.returncode == 0, done.stdout + done.stderr
        assert processes_of_shift(run.root, 1) == []
        assert f"ended process {survivor[0]}" in done.stdout
        assert [e["shift"] for e in workspace.events(run) if e["type"] == "shift.started"] == [1, 2]
    finally:
        for pid in processes_of_shift(run.root, 1):
            os.kill(pid, signal.SIGKILL)


def test_the_namespace_ends_every_process_of_a_turn_whose_server_died(workspace):
    """With init defaults (nightshift's namespace where bubblewrap works) nothing of the turn outlives its server,
    not even a child that ignored the hangup: the namespace dies with its wrapper. The next shift starts as usual."""
    from nightshift.supervisor.run.liveness import processes_of_shift
    from tests.fixtures_core import supervise
    from tests.fixtures_namespace import need_namespace

    need_namespace()
    run = _kill_supervisor_and_server(workspace)
    try:
        wait_for(lambda: processes_of_shift(run.root, 1) == [], 30, what="every process of the turn to end")
        done = supervise(run)
        assert done.returncode == 0, done.stdout + done.stderr
        assert [e["shift"] for e in workspace.events(run) if e["type"] == "shift.started"] == [1, 2]
    finally:
        for pid in processes_of_shift(run.root, 1):
            os.kill(pid, signal.SIGKILL)


def test_a_leftover_of_a_later_turn_of_the_shift_is_found_by_its_shift(tmp_path):
    """An interactive session counts turns up with each push-back, but its processes keep the turn they were
    launched with: a lost turn 3 must still find the agent started as turn 1."""
    from nightshift.supervisor.run.liveness import processes_of_shift
    env = {**os.environ, "NIGHTSHIFT_RUN_DIR": str(tmp_path), "NIGHTSHIFT_SHIFT": "2", "NIGHTSHIFT_TURN": "1"}
    agent = subprocess.Popen(["sleep", "60"], env=env)
    try:
        wait_for(lambda: agent.pid in processes_of_shift(tmp_path, 2), 30, what="the agent's marks")
        assert agent.pid not in processes_of_shift(tmp_path, 3)
    finally:
        agent.kill()
        agent.wait()
