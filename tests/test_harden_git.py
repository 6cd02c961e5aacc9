"""The user's git state at `nightshift run`: what was dirty, staged or untracked before the run is never
committed unless the agent changed it (the decision is recorded as an event); conflict markers are never
committed and never pass; a merge in progress and a detached HEAD are refused; one live run per workspace."""
from __future__ import annotations

import subprocess
import sys

from nightshift.supervisor.run.registry import find_run
from tests.fixtures_core import nightshift, supervise, wait_for, workspace  # noqa: F401
from tests.test_bad_input import one_line_error

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def git(ws, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws.path, check=True,
                          capture_output=True, text=True).stdout


def committed_files(ws, since: str) -> set[str]:
    return set(git(ws, "diff", "--name-only", since, "HEAD").split())


def test_files_dirty_before_the_run_are_not_committed_unless_the_agent_changes_them(workspace):
    ws = workspace.configure({"s1t1": [["append", "notes.md", "agent's line\n"], *FIX]})
    base = git(ws, "rev-parse", "HEAD").strip()
    (ws.path / ".env.local").write_text("API_TOKEN=not-for-git\n")  # untracked, with a secret
    (ws.path / "draft.py").write_text("print('half done')\n")
    git(ws, "add", "draft.py")  # staged by the user, not for this run
    (ws.path / "notes.md").write_text("the user's notes\n")  # untracked, and the agent will add to it
    run = ws.create_run()
    assert supervise(run).returncode == 0
    events = ws.events(run)
    recorded = next(e for e in events if e["type"] == "workspace.recorded")["data"]
    assert set(recorded["paths"]) == {".env.local", "draft.py", "notes.md"} and "agent changes" in recorded["decision"]
    assert committed_files(ws, base) == {"check.txt", "notes.md"}
    status = git(ws, "status", "--porcelain")
    assert "?? .env.local" in status and "A  draft.py" in status  # left exactly as the user had them
    commit = next(e for e in events if e["type"] == "commit.created")["data"]
    assert set(commit["kept_out"]) == {".env.local", "draft.py"}


def test_conflict_markers_are_never_committed_and_never_pass(workspace):
    markers = "def f():\n<<<<<<< HEAD\n    return 1\n=======\n    return 2\n>>>>>>> theirs\n"
    ws = workspace.configure({"s1t1": [["write", "solver.py", markers], *FIX],
                              "s1t2": [["write", "solver.py", "def f():\n    return 2\n"], *FIX]})
    base = git(ws, "rev-parse", "HEAD").strip()
    run = ws.create_run()
    assert supervise(run).returncode == 0
    events = ws.events(run)
    first = next(e for e in events if e["type"] == "verify.finished")["data"]
    assert not first["passed"] and "conflict markers" in first["summary"]
    kept = next(e for e in events if e["type"] in ("commit.created", "commit.skipped"))["data"]
    assert kept["conflicts"] == ["solver.py"]
    history = git(ws, "log", "-p", f"{base}..HEAD")
    assert "<<<<<<<" not in history and "return 2" in history
    assert events[-1]["data"]["outcome"] == "done"


def test_an_unresolved_merge_and_a_detached_head_are_refused_at_run(workspace):
    ws = workspace.configure({"default": FIX})
    main = git(ws, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(ws, "checkout", "-qb", "other")
    (ws.path / "check.txt").write_text("theirs\n")
    git(ws, "add", "check.txt")
    git(ws, "commit", "-qm", "theirs")
    git(ws, "checkout", "-q", main)
    (ws.path / "check.txt").write_text("ours\n")
    git(ws, "add", "check.txt")
    git(ws, "commit", "-qm", "ours")
    subprocess.run(["git", "merge", "other"], cwd=ws.path, capture_output=True)
    one_line_error(nightshift("run", str(ws.path)), "unresolved merge", "check.txt", "git merge --abort")
    git(ws, "merge", "--abort")
    git(ws, "checkout", "-q", "--detach")
    one_line_error(nightshift("run", str(ws.path)), "detached HEAD", "git switch -c")
    assert not list((ws.path / ".nightshift" / "runs").glob("*/events.jsonl"))  # no run half-created


def test_a_second_run_in_a_workspace_with_a_live_run_is_refused_naming_it(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "60"]]})
    first = nightshift("run", str(ws.path))
    assert first.returncode == 0, first.stderr
    run_id = first.stdout.split()[1]
    second = nightshift("run", str(ws.path))
    one_line_error(second, f"run {run_id} is live", f"nightshift stop {run_id}")
    assert len(list((ws.path / ".nightshift" / "runs").glob("*"))) == 1
    assert nightshift("stop", run_id).returncode == 0
    run = find_run(run_id)
    wait_for(lambda: "run.finished" in ws.types(run), 60, what="the first run to stop")


def test_a_head_detached_by_the_agent_pauses_the_run_instead_of_committing_off_branch(workspace):
    ws = workspace.configure({"s1t1": [["shell", "git checkout -q --detach"], *FIX]})
    branch = git(ws, "rev-parse", "--abbrev-ref", "HEAD").strip()
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), 60, what="the run to pause")
        assert "HEAD was detached" in nightshift("status", run.run_id).stdout
        assert "commit.created" not in ws.types(run)
        git(ws, "switch", "-q", branch)
        assert nightshift("resume", run.run_id).returncode == 0
        assert proc.wait(timeout=90) == 0
    finally:
        proc.kill()
    commit = next(e for e in ws.events(run) if e["type"] == "commit.created")["data"]
    assert commit["branch"] == branch and git(ws, "log", "-1", "--format=%s", branch).startswith("nightshift:")


def test_a_head_detached_during_the_run_is_held_with_a_command_that_pastes(tmp_path):
    """The hold names the fix as a command for the user's shell, quoted for a path with a space and a quote."""
    from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
    from tests.fixtures_core import AGENT, Workspace, kill_supervisor

    path = tmp_path / "my lab's run" / "ws"
    path.mkdir(parents=True)
    init_workspace(path, InitOptions(goal="make check.txt say ok", agent="command"))
    (path / "agent.py").write_text(AGENT)
    ws = Workspace(path).configure({"s1t1": [["write", "check.txt", "ok"], ["shell", "git checkout -q --detach"],
                                             ["claim", "done", "fixed"]]}, backend="local")
    branch = git(ws, "rev-parse", "--abbrev-ref", "HEAD").strip()
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), 90, what="the hold for the detached HEAD")
        reason = next(e["data"]["reason"] for e in ws.events(run) if e["type"] == "run.paused")
        command = reason.split("`")[1]
        assert command.startswith("git -C '") and command.endswith(f" switch {branch}"), reason
        pasted = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
        assert pasted.returncode == 0, pasted.stderr
        assert git(ws, "rev-parse", "--abbrev-ref", "HEAD").strip() == branch
        assert nightshift("stop", run.run_id).returncode == 0
        proc.wait(timeout=90)
        assert ws.events(run)[-1]["type"] == "run.finished" and ws.events(run)[-1]["data"]["outcome"] == "stopped"
    finally:
        kill_supervisor(run.root)
        proc.kill()


def test_the_agents_own_git_mv_is_committed_as_a_rename(workspace):
    """An agent that renames a tracked file with `git mv` in its turn: the shift's commit takes the rename (its
    source, gone from the tree and the index alike, is no pathspec for `git add`), and the run ends done."""
    (workspace.path / "old_name.py").write_text("x = 1\n")
    ws = workspace.configure({"s1t1": [["shell", "git mv old_name.py new_name.py"], *FIX]}, backend="local")
    base = git(ws, "rev-parse", "HEAD").strip()
    run = ws.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert {"new_name.py", "check.txt"} <= committed_files(ws, base)
    tracked = git(ws, "ls-files").split()
    assert "new_name.py" in tracked and "old_name.py" not in tracked
