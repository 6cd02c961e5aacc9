"""`nightshift report` on bad input: a torn log, garbage lines, missing shift files or log, no oracle, a
CHANGELOG without a failed-approaches section, an older run: always a report that says what is missing,
never a traceback; a path that is no run and an unwritable output are one-line errors."""
from __future__ import annotations

import json
import shutil

from tests.fixtures_core import nightshift
from tests.fixtures_report import write_long_run


def report(run_root, tmp_path) -> tuple[str, str]:
    html = tmp_path / "r.html"
    out = nightshift("report", str(run_root), "-o", str(html))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    return out.stdout, html.read_text()


def test_torn_last_line_and_garbage_in_the_middle(tmp_path):
    run = write_long_run(tmp_path, shifts=5)
    lines = run.events.read_text().splitlines(keepends=True)
    lines.insert(10, "this is not json\n")
    lines.insert(20, '{"v":1,"seq":"x","type":7}\n')
    run.events.write_text("".join(lines) + '{"v":1,"seq":999,"ts":"2026-11-2')
    run.snapshot.unlink()  # replay the whole damaged log
    out, html = report(run.root, tmp_path)
    assert "torn last line" in out and "unreadable" in out
    assert "VERIFIED DONE" in html and "<table id=shifts>" in html


def test_missing_log_still_lists_the_shift_folders(tmp_path):
    run = write_long_run(tmp_path, shifts=3)
    for n in (1, 2, 3):
        run.shift_dir(n).mkdir(parents=True, exist_ok=True)
    run.events.unlink()
    run.snapshot.unlink()
    out, html = report(run.root, tmp_path)
    assert "events.jsonl is missing" in out
    assert html.count("(no events; shift folder only)") == 3 and "No timeline" in html


def test_no_oracle_and_no_failed_approaches_section(tmp_path):
    run = write_long_run(tmp_path, shifts=3)
    run.config.write_text('goal = "tests only"\n[limits]\nmax_shifts = 10\n')
    changelog = run.workspace / "CHANGELOG.md"
    changelog.write_text("# CHANGELOG\n\n## Entries\n\n- tried things\n")
    out, html = report(run.root, tmp_path)
    assert "no oracle configured" in out
    assert "has no &#x27;Failed approaches&#x27; section" in html or "has no 'Failed approaches' section" in html


def test_an_older_run_with_fewer_fields_and_an_unknown_config_key(tmp_path):
    run = write_long_run(tmp_path, shifts=4)
    run.snapshot.unlink()
    old = []
    for line in run.events.read_text().splitlines():
        event = json.loads(line)
        event.pop("v", None)
        if event["type"] == "verify.finished":
            event["data"] = {"passed": event["data"]["passed"], "summary": event["data"]["summary"]}
        if event["type"] == "run.paused":
            event["data"].pop("kind", None)
        old.append(json.dumps(event))
    run.events.write_text("\n".join(old) + "\n")
    run.config.write_text(run.config.read_text() + "\n[retired_section]\nknob = 1\n")
    out, html = report(run.root, tmp_path)
    assert "config.toml could not be read" in out
    assert "<table id=shifts>" in html and "breaker pause" in html


def test_a_run_copied_from_another_machine(tmp_path):
    run = write_long_run(tmp_path / "cluster", shifts=3)
    copy = tmp_path / "laptop" / run.run_id
    shutil.copytree(run.root, copy)
    shutil.rmtree(tmp_path / "cluster")  # the workspace (CHANGELOG.md, git) stayed on the cluster
    out, html = report(copy, tmp_path)
    assert "VERIFIED DONE" in out and "CHANGELOG.md is not here" in html


def test_not_a_run_and_an_unwritable_output_are_one_line_errors(tmp_path):
    out = nightshift("report", str(tmp_path / "nothing-here"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    run = write_long_run(tmp_path, shifts=1)
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = nightshift("report", str(run.root), "-o", str(blocker / "r.html"))
    assert out.returncode == 2 and "cannot write the report" in out.stderr and "-o" in out.stderr
    assert out.stderr.count("\n") == 1


def test_a_wait_for_a_person_and_its_answer_are_told_as_such_not_as_an_api_limit():
    from supervisor.cli.report_human import human_events
    from supervisor.cli.report_scan import Scan
    scan = Scan()
    scan.human = [
        {"type": "agent.waiting", "shift": 1, "data": {"kind": "human", "what": "Bash(make)", "on_wait": "wait"}},
        {"type": "command.accepted", "shift": 1, "data": {"verb": "approve"}},
        {"type": "agent.wait_answered", "shift": 1, "data": {"answer": "yes", "by": "nightshift approve"}},
        {"type": "agent.waiting", "shift": 2, "data": {"until": "2026-11-23T01:00:00Z", "reason": "rate limit"}}]
    texts = [e["text"] for e in human_events(scan)]
    assert texts == ["waited for a person: Bash(make) (policy: wait)", "approve by a person",
                     "the wait was answered: yes (by nightshift approve)",
                     "API limit, waited until 2026-11-23T01:00:00Z: rate limit"]
