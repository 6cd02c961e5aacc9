"""`[notify] report = true`: the notify command gets NIGHTSHIFT_REPORT, the path of the run's report, written
before it runs (a real supervisor, the scripted agent, real git)."""
from __future__ import annotations

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import workspace  # noqa: F401

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]
NOTIFY = '[notify]\ncommand = "echo \\"$NIGHTSHIFT_EVENT $NIGHTSHIFT_REPORT\\" >> {out}"\nreport = true\n'


def test_notify_names_the_report(workspace, tmp_path):
    out = tmp_path / "notified.txt"
    ws = workspace.configure({"s1t1": FIX}, backend="local", extra=NOTIFY.format(out=out))
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    kind, path = out.read_text().split()
    assert kind == "done" and path == str(run.root / "report.html")
    assert "VERIFIED DONE at commit" in (run.root / "report.html").read_text()


def test_without_report_there_is_no_report_path(workspace, tmp_path):
    out = tmp_path / "notified.txt"
    extra = NOTIFY.format(out=out).replace("report = true", "report = false")
    ws = workspace.configure({"s1t1": FIX}, backend="local", extra=extra)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    assert out.read_text().split() == ["done"] and not (run.root / "report.html").exists()
