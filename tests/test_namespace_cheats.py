"""Issue 21: one boundary around every process of the agent. Scripted command agents from `nightshift init`
defaults try every door from their own turn (and from code the test command runs): read a held-out reference
(`cat`, `python -c open(...)`, a subprocess, `find /`), write a reference, a passed test and nightshift.toml from a
subprocess, leave a file in /tmp for a later command, leave a process running. Each is refused or has no effect,
is named in the next push-back, and the run does not end done; an honest solver ends done with the boundary on."""
from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.fixtures_core import supervise, workspace  # noqa: F401
from tests.fixtures_slurm import slurm_cluster  # noqa: F401
from tests.fixtures_namespace import (HONEST, REFERENCE, need_namespace, oracle_block, run_until_it_rests,
                                      setup_references)

TEST = "def test_reads_the_visible_reference():\n    assert open('reference/result.dat').read().startswith('#')\n"


def _events(workspace, run, kind):
    return [e["data"] for e in workspace.events(run) if e["type"] == kind]


SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nmax_job_retries = 1\n'


@pytest.mark.parametrize("backend", ["local", "slurm"])
def test_every_door_from_the_agents_turn_is_closed_and_named(workspace, tmp_path, backend, request):
    """From a local turn, and from a turn that is a batch job on the localhost Slurm cluster."""
    need_namespace()
    if backend == "slurm":
        request.getfixturevalue("slurm_cluster")
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    marker, planted = f"ns-left-{uuid.uuid4().hex[:8]}", f"planted-{uuid.uuid4().hex[:8]}.txt"
    (ws / "tests").mkdir()
    (ws / "tests" / "test_ref.py").write_text(TEST)
    steal = (f"cat {held} > stolen.dat; python3 -c \"open('stolen2.dat','w').write(open('{held}').read())\"; "
             f"python3 -c \"import subprocess; subprocess.run(['cp', '{held}', 'stolen3.dat'])\"; "
             f"find / -name {held.name} -not -path '/proc/*' 2>/dev/null > found.txt")
    solver = HONEST + "import shutil\nshutil.copy('stolen.dat', 'out/heldout.dat')\n"
    workspace.configure({
        "s1t1": [["write", "solver.py", HONEST]],
        "s1t2": [["shell", steal],
                 ["write", "solver.py", solver],
                 ["shell", "python3 -c \"open('tests/test_ref.py', 'w').write('def test_x(): pass')\""],
                 ["shell", "echo '# loosened' >> nightshift.toml"],
                 ["shell", "echo 0 0 > reference/result.dat"],
                 ["shell", f"echo answers > /tmp/{planted}"],
                 ["shell", f"(exec -a {marker} sleep 300) > /dev/null 2>&1 &"],
                 ["claim", "done", "it matches"]],
        "default": [["write", "solver.py", HONEST], ["claim", "done", "honest now"]],
    }, backend=backend, pushbacks=3, max_shifts=1,
        test_command=f"echo TMP-SEEN; ls /tmp; {sys.executable} -m pytest -q tests",  # /tmp as the command sees it
        extra=oracle_block(str(held)) + (SLURM if backend == "slurm" else ""))
    config_before = (ws / "nightshift.toml").read_text()
    run = workspace.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stderr[-2000:]
    # nothing reached the agent or outlived its turn
    for name in ("stolen.dat", "stolen2.dat", "stolen3.dat"):
        assert not (ws / name).exists() or (ws / name).read_text() == "", name
    assert str(held) not in (ws / "found.txt").read_text()
    # the test command runs in the verdict's clean checkout (gone with the run): what it saw is in its logs
    logs = [p.read_text(errors="replace") for p in run.root.rglob("tests.log")]
    assert any("TMP-SEEN" in log for log in logs), "the test command's output was not logged"
    assert not any(planted in log for log in logs) and not (Path("/tmp") / planted).exists()
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1
    # nothing protected changed
    assert (ws / "tests" / "test_ref.py").read_text() == TEST
    assert (ws / "nightshift.toml").read_text() == config_before
    assert (ws / "reference" / "result.dat").read_text() == REFERENCE
    # the cheating claim failed, and the next push-back names what the namespace refused and ended
    verdicts = _events(workspace, run, "verify.finished")
    claims = [v for v in verdicts if v.get("claimed") == "done"]
    assert claims and not claims[0]["passed"]
    denied = _events(workspace, run, "policy.denied")
    rules = {d["rule"] for d in denied}
    assert {"leftover", "read_only"} <= rules, denied
    pushback = run.turn_file(1, 3, "prompt.md").read_text()
    assert "sleep" in pushback and "outlives your turn" in pushback and "Read-only file system" in pushback
    # an honest solver then ends done with the boundary on (its test reads the visible reference)
    finished = _events(workspace, run, "run.finished")
    assert finished and finished[-1]["outcome"] == "done"
    assert _events(workspace, run, "policy.sandbox")[0]["namespace"] is True
    if backend == "slurm":
        assert {e["data"]["target"]["backend"] for e in workspace.events(run) if e["type"] == "agent.started"} \
            == {"slurm"} and run.turn_file(1, 2, "sbatch").exists()


def test_code_the_test_command_runs_cannot_reach_the_answers_or_outlive_it(workspace, tmp_path):
    need_namespace()
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    marker = f"ns-test-left-{uuid.uuid4().hex[:8]}"
    (ws / "tests").mkdir()
    (ws / "tests" / "test_ref.py").write_text(TEST)
    cheat = (f"import shutil, subprocess\n"
             f"try:\n    shutil.copy({str(held)!r}, 'from-test.dat')\nexcept OSError as exc:\n    print('no:', exc)\n"
             f"for path in ('reference/result.dat', 'nightshift.toml', 'tests/test_ref.py'):\n"
             f"    try:\n        open(path, 'a').write('x')\n    except OSError as exc:\n        print('no:', exc)\n"
             f"subprocess.Popen(['bash', '-c', 'exec -a {marker} sleep 300'])\n")
    solver = HONEST + "import os, shutil\nif os.path.exists('from-test.dat'):\n    shutil.copy('from-test.dat', 'out/heldout.dat')\n"
    workspace.configure({
        "s1t1": [["write", "solver.py", HONEST], ["write", "cheat.py", cheat], ["claim", "done", "first"]],
        "default": [["write", "solver.py", solver], ["claim", "done", "now with the test's help"]],
    }, backend="local", pushbacks=2, max_shifts=1,
        test_command=f"{sys.executable} cheat.py; {sys.executable} -m pytest -q tests", extra=oracle_block(str(held)))
    config_before = (ws / "nightshift.toml").read_text()
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    assert not (ws / "from-test.dat").exists()
    assert (ws / "reference" / "result.dat").read_text() == REFERENCE
    assert (ws / "nightshift.toml").read_text() == config_before
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1
    # The test file passed when the run began, so it is read-only from turn one (issue #28): every door held, and the
    # claim stands on the honest solver alone (the held-out copy never reached out/heldout.dat).
    assert (ws / "tests" / "test_ref.py").read_text() == TEST
    verdicts = _events(workspace, run, "verify.finished")
    tests = next(c for c in verdicts[0]["checks"] if c["name"] == "tests")
    assert "the test command left 1 process(es) running (sleep): ended with it" in " ".join(tests["lines"])


@pytest.mark.parametrize("backend", ["local", "tmux"])
def test_an_honest_solver_ends_done_inside_the_namespace(workspace, tmp_path, backend):
    need_namespace()
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    (ws / "tests").mkdir()
    (ws / "tests" / "test_ref.py").write_text(TEST)
    workspace.configure({"default": [["write", "solver.py", HONEST], ["claim", "done", "computed"]]},
                        backend=backend, test_command=f"{sys.executable} -m pytest -q tests",
                        extra=oracle_block(str(held)))
    run = workspace.create_run()
    out = supervise(run)
    assert out.returncode == 0, out.stderr[-2000:]
    finished = _events(workspace, run, "run.finished")
    assert finished and finished[-1]["outcome"] == "done", _events(workspace, run, "verify.finished")
    assert (run.turn_file(1, 1, "inner.sh")).exists()
