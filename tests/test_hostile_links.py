"""Issue 27, item 4: no link leads out, nothing blocks. A scripted command agent (init defaults, the namespace on)
replaces the lab notes, the plan and a candidate by symlinks to a secret outside the workspace, and leaves a FIFO
where a candidate should be: none of them is read, quoted or written through; each is named; the run does not end
done. A verdict keeps the supervisor answering `stop` while it runs, and a step that never answers fails it by name.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid

from nightshift.supervisor.shift.verdict_clock import verify_in_time
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace, run_until_it_rests

ORACLE = ('\n[oracle]\ncommand = "true"\n'
          '[[oracle.compare]]\nname = "result"\ncandidate = "out/result.dat"\nreference = "reference/result.dat"\n'
          'rtol = 1e-6\n'
          '[[oracle.compare]]\nname = "piped"\ncandidate = "out/piped.dat"\nreference = "reference/result.dat"\n'
          'rtol = 1e-6\n')
REFERENCE = "# 1:x 2:y\n" + "".join(f"{x} {1.0 / (x + 0.123456789):.12f}\n" for x in range(1, 41))


def test_links_out_and_fifos_are_named_never_read_or_written_through(workspace, tmp_path):
    need_namespace()
    ws = workspace.path
    secret_text = f"TOPSECRET-{uuid.uuid4().hex}\n"
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(secret_text)
    (ws / "reference").mkdir()
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    swap = (f"mkdir -p out; rm -f CHANGELOG.md CLAUDE.md; ln -s {secret} CHANGELOG.md; ln -s {secret} CLAUDE.md; "
            f"ln -s {secret} out/result.dat; mkfifo out/piped.dat")
    # the agent's own link in out/ is stale output, removed before the oracle command runs (never its target); the
    # command then makes one itself: what the oracle measures is the command's output, a link out named, never read
    # command then makes one itself: what the oracle measures is the command's output, a link out named, never read.
    # The agent's FIFO is no part of its commit (git holds none), so the verdict's clean checkout never meets it: the
    # command makes one there too, where the verdict reads its candidates
    oracle = ORACLE.replace('command = "true"', f'command = "mkdir -p out; ln -sfn {secret} out/result.dat; '
                                                'rm -f out/piped.dat; mkfifo out/piped.dat"')
    workspace.configure({"default": [["shell", swap], ["write", "check.txt", "ok"], ["claim", "done", "done"]]},
                        backend="local", pushbacks=1, max_shifts=1, extra=oracle)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    events = workspace.events(run)
    assert not any(e["type"] == "run.finished" and e["data"].get("outcome") == "done" for e in events)
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    text = json.dumps(verdicts)
    assert f"out/result.dat is a symlink out of the workspace (to {secret})" in text
    assert "out/piped.dat is a FIFO, not a regular file" in text
    assert f"CLAUDE.md is a symlink out of the workspace (to {secret})" in text
    assert secret.read_text() == secret_text  # nothing written through a link (the Definition of done restored)
    report = nightshift("report", run.run_id, cwd=ws)
    leaked = [str(p) for p in run.root.rglob("*") if p.is_file() and secret_text.strip().encode() in p.read_bytes()]
    assert not leaked and secret_text.strip() not in report.stdout + report.stderr, leaked


def test_the_supervisor_answers_stop_while_a_verdict_runs(workspace):
    """A test command that takes long: `nightshift stop` is accepted while it runs (not only after it)."""
    ws = workspace.path
    workspace.configure({"default": [["write", "check.txt", "ok"], ["claim", "done", "done"]]}, backend="local",
                        test_command="sleep 25; test \"$(cat check.txt)\" = ok")
    run = workspace.create_run()
    from nightshift.supervisor.shift.launcher import supervise_argv
    proc = subprocess.Popen(supervise_argv(run), cwd=run.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "verify.started" in workspace.types(run), timeout=60, what="the verdict to start")
        assert nightshift("stop", run.run_id, cwd=ws).returncode == 0
        types = wait_for(lambda: (t := workspace.types(run)) and "command.accepted" in t and t, timeout=20,
                         what="the stop to be accepted while the tests run")
        assert "verify.finished" not in types[:types.index("command.accepted")]
        proc.wait(timeout=90)
    finally:
        proc.kill()
    assert workspace.types(run)[-1] == "run.finished"


def test_a_step_that_never_answers_fails_the_verdict_by_name_and_ticks_go_on(tmp_path):
    """A read of a FIFO nobody writes (what an unguarded reader would do) never returns: the deadline ends the
    wait, names the step, and the loop's tick ran meanwhile."""
    fifo = tmp_path / "blocks"
    os.mkfifo(fifo)
    ticks: list[float] = []

    def verify():
        from nightshift.supervisor.verify.pipeline import STEPS
        STEPS[threading.get_ident()] = "plan"
        with open(fifo) as fh:  # blocks: nobody opens it for writing
            return fh.read()

    started = time.monotonic()
    found = verify_in_time(verify, lambda step, deadline: f"{step} did not answer in {deadline:g}s",
                           lambda: ticks.append(time.monotonic()), deadline=2.0, every=0.1)
    assert found == "plan did not answer in 2s"
    assert len(ticks) >= 5 and time.monotonic() - started < 30
    with open(fifo, "w"):  # let the abandoned worker go
        pass


def test_an_exception_in_the_verdict_reaches_the_loop(tmp_path):
    def verify():
        raise RuntimeError("boom")

    try:
        verify_in_time(verify, lambda s, d: None, lambda: None, deadline=10)
    except RuntimeError as exc:
        assert str(exc) == "boom"
    else:
        raise AssertionError("the verdict's exception was swallowed")
