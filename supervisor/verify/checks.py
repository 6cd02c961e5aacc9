"""The deterministic checks of a verdict: the test command (per-test results from JUnit XML, with a ratchet
on tests that passed before), verification commands, the plan's checkboxes, and the lab notes.

Each check returns a ``Check``: its name, pass/fail, a one-line summary and the measured lines the push-back
quotes.
"""
from __future__ import annotations

import os
import stat
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.sandbox.command import command_env, command_namespace, leftover_line, network_hint
from nightshift.supervisor.verify.junit import passed_total
from nightshift.supervisor.verify.plan import plan_items
from nightshift.supervisor.verify.ratchet import Ratchet, judge, judge_totals, shown


@dataclass
class Check:
    name: str
    passed: bool
    summary: str
    lines: list[str] = field(default_factory=list)  # what the push-back quotes
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "passed": self.passed, "summary": self.summary, "lines": self.lines}
        if self.data.get("notes"):
            out["notes"] = self.data["notes"]  # what the namespace ended or refused, named even when it passed
        if self.data.get("passed_total") is not None:
            out["passed_total"] = self.data["passed_total"]  # the ratchet's count where only totals are readable
        return out


def run_shell(command: str, cwd: Path, timeout: float, log: Path, boundary: Boundary | None = None,
              kind: str = "test", notes: list[str] | None = None, env: dict[str, str] | None = None
              ) -> tuple[int | None, str]:
    """Run ``command`` in its own process group, inside the run's namespace when ``boundary`` is given (the command
    runs the agent's code); returns (exit status or None on timeout, output). What the namespace ended or refused
    (processes left running, a network it does not have) is added to ``notes``. ``env``: in place of the
    supervisor's own (less its secrets)."""
    with command_namespace(boundary, kind, command, outputs=log.parent) as ns, open(log, "wb") as out:
        proc = subprocess.Popen(ns.argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env if env is not None else command_env())
        try:
            status: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = None
        leftovers = ns.leftovers()
    output = log.read_text(errors="replace")
    if notes is not None:
        notes += [n for n in [leftover_line(kind, leftovers), network_hint(kind, output, boundary) if status else None]
                  if n]
    return status, output


def _tail(text: str, n: int = 8) -> list[str]:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-n:]


@dataclass
class RanTests:
    status: int | None  # None: timed out (and stopped)
    output: str
    results: dict[str, dict[str, str]]  # per test, from nightshift's plugin; empty where the runner gives none
    always_equal: dict[str, list[str]] = field(default_factory=dict)  # test id -> objects equal to anything (probe)
    plugin: bool = False  # nightshift's plugin reported from at least one pytest process of the command
    sentinels: list[str] = field(default_factory=list)  # what the sentinels saw (verify/sentinels.py): findings
    planted: int = 0  # sentinels planted, every pytest process together


def run_tests(command: str, cwd: Path, timeout: float, out_dir: Path, junit: bool, boundary: Boundary | None = None,
              notes: list[str] | None = None, probe: bool = False, sentinel_from: list[str] | None = None) -> RanTests:
    """The test command once, with nightshift's pytest plugin reaching every pytest it starts (verify/test_plugin.py:
    per-test results, the equality probe, the sentinels): the one way the verdict's ratchet, the held-out tests and
    the preflight's starting set run the tests, so the preflight runs what every verdict runs. ``junit`` false: the
    command as it is, totals only. ``probe``: the equality probe's findings are returned (it is loaded either way).
    ``sentinel_from``: the test ids the sentinels are derived from (none: no sentinels)."""
    from nightshift.supervisor.verify import sentinels as sent
    from nightshift.supervisor.verify.test_plugin import plugin_command, plugin_env, read_reports

    if not junit:
        status, output = run_shell(command, cwd, timeout, out_dir / "tests.log", boundary, "test", notes)
        return RanTests(status, output, {})
    chosen = sent.choose(cwd, sentinel_from) if sentinel_from else []
    manifest = sent.write_manifest(chosen, out_dir / "sentinels.json")
    env = plugin_env(command_env(), out_dir, cwd, manifest)
    status, output = run_shell(plugin_command(command), cwd, timeout, out_dir / "tests.log", boundary, "test", notes,
                               env)
    if manifest is not None:
        manifest.unlink(missing_ok=True)  # the hidden names go no further than the run
    found = read_reports(out_dir) if status is not None else None
    if found is None:
        return RanTests(status, output, {}, plugin=True)
    lines = sent.findings(chosen, found.sentinels, found.results) if chosen and found.processes else []
    if chosen and found.processes and not sent.planted(found.sentinels) and found.results:
        lines.append("the sentinels could not be planted in the test run (their tests did not run): it cannot be "
                     "shown able to fail")
    return RanTests(status, output, found.results, found.always_equal if probe else {}, found.processes > 0, lines,
                    sent.planted(found.sentinels))


def check_tests(command: str, cwd: Path, timeout: float, out_dir: Path, junit: bool, ratchet: Ratchet,
                boundary: Boundary | None = None) -> Check:
    """The test command against the ratchet: every test of its set must pass (one line per regression, with why),
    and, without per-test results, no fewer tests may pass than before."""
    notes: list[str] = []
    ran = run_tests(command, cwd, timeout, out_dir, junit, boundary, notes, probe=True,
                    sentinel_from=sorted(ratchet.kept | ratchet.goal))
    status, output, results = ran.status, ran.output, ran.results
    if status is None:
        return Check("tests", False, f"tests: timed out after {timeout:.0f}s", notes + _tail(output))
    passed_now = {t for t, r in results.items() if r["outcome"] == "passed"}
    failing = {t: r for t, r in results.items() if r["outcome"] in ("failed", "error", "uncollectable")}
    count = None
    if results:
        regressed, named = judge(ratchet, results, cwd)
    elif ratchet.kept or ratchet.goal:  # per-test results before, none now: nothing of them shown to pass
        regressed = sorted(ratchet.kept) or sorted(ratchet.goal)  # "regressed": what passed before, when any did
        why = ("no pytest process of it reported to nightshift's plugin: did it stop before running the tests, or "
               "start pytest where the plugin's folder is not on PYTHONPATH?" if junit else
               "[verify] junit is off now")
        named = [f"vanished: all {len(regressed)} tests of the ratchet (the test command gave per-test results "
                 f"before and none now: {why})"]
    else:
        count = passed_total(output)
        named = judge_totals(ratchet, count)
        regressed = named
    full = out_dir / "regressions.txt"
    if named:
        full.write_text("\n".join(named) + "\n")
    lines: list[str] = shown(named, full)
    for test_id, result in list(failing.items())[:8]:
        if test_id not in regressed:
            said = result["message"].splitlines()[0] if result["message"] else ""
            lines.append(f"FAIL {test_id}: {said}".rstrip(": "))
    if not results and status != 0:
        lines += _tail(output)
    lines = notes + lines
    unmet = ratchet.unmet(results) if results else []
    forged = always_equal_lines(ran.always_equal) + ran.sentinels
    lines += forged
    passed = status == 0 and not regressed and not unmet and not forged
    if results:
        summary = f"tests: {len(passed_now)} passed, {len(failing)} failing, {len(regressed)} regressed"
    else:
        summary = f"tests: exit status {status}" + (f", {count} passed (totals only)" if count is not None else "")
        if named:  # "regressed" only where a test passed before; the goal's tests that never did are gone
            summary += ", regressed" if ratchet.kept or count is not None else ", the goal's tests did not run"
    if ran.sentinels:
        summary += "; the test run was shown to forge results"
    return Check("tests", passed, summary, lines, {"passed_tests": sorted(passed_now), "notes": notes,
                                                   "passed_total": count})


def always_equal_lines(found: dict[str, list[str]]) -> list[str]:
    """The probe's findings, a line per test: equality that holds whatever the value is, not an answer."""
    return [f"forged equality: {test_id} compared {', '.join(sorted(set(what)))}, which equals anything it is "
            "compared with: that is not an answer; return plain values" for test_id, what in sorted(found.items())]


def check_commands(commands: list[str], cwd: Path, timeout: float, out_dir: Path,
                   boundary: Boundary | None = None) -> Check:
    failed: list[str] = []
    ended: list[str] = []  # what the namespace ended or refused: named, not a failure by itself
    for i, command in enumerate(commands):
        notes: list[str] = []
        status, output = run_shell(command, cwd, timeout, out_dir / f"command-{i}.log", boundary, "verify", notes)
        if status != 0:
            why = "timed out" if status is None else f"exit status {status}"
            failed.append(f"`{command}` {why}: " + " | ".join(_tail(output, 3)))
        ended += notes
    summary = f"commands: {len(commands) - len(failed)}/{len(commands)} pass"
    return Check("commands", not failed, summary, failed + ended, {"notes": ended})


def check_plan(plan_file: Path, known: dict[str, bool], claimed_done: bool, require_all: bool) -> Check:
    """Open items, and items that vanished without being checked (reported, never silently accepted)."""
    try:
        # Agent-written text: a byte that is not UTF-8 is replaced, never a reason to stop the supervisor.
        items = plan_items(untrusted.read_text(plan_file.parent, plan_file.name))
    except FileNotFoundError:
        return Check("plan", False, f"plan: {plan_file.name} is missing", [f"{plan_file.name} was deleted"])
    except untrusted.Untrusted as exc:
        return Check("plan", False, f"plan: {plan_file.name} not read", [str(exc)])
    vanished = [text for text, checked in known.items() if not checked and text not in items]
    open_items = [text for text, checked in items.items() if not checked]
    lines = [f"VANISHED (never checked): {text}" for text in vanished[:8]]
    if claimed_done and require_all:
        lines += [f"OPEN: {text}" for text in open_items[:8]]
    passed = not vanished and not (claimed_done and require_all and open_items)
    done = sum(items.values())
    summary = f"plan: {done}/{len(items)} checked" + (f", {len(vanished)} vanished unchecked" if vanished else "")
    return Check("plan", passed, summary, lines, {"items": items, "open": open_items})


def check_changelog(changed: bool, required: bool, ws: Path | None = None) -> Check:
    not_notes = _not_a_file(ws, "CHANGELOG.md") if ws is not None else None
    if not_notes:  # a link (out, or anywhere) or a folder is no lab notes, whatever changed
        return Check("changelog", False, f"changelog: CHANGELOG.md is {not_notes}, not lab notes",
                     [f"CHANGELOG.md is {not_notes}: the lab notes are a regular file of the workspace; put your "
                      "notes back in it as a file"])
    if changed:
        return Check("changelog", True, "changelog: updated this shift")
    return Check("changelog", not required, "changelog: no entry this shift",
                 ["CHANGELOG.md has no new entry this shift: add a dated entry (what you did, what it measured)"])


def _not_a_file(ws: Path, name: str) -> str | None:
    """What ``name`` is when it is there but not a regular file (lstat: nothing followed), else None."""
    try:
        mode = os.lstat(ws / name).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    return f"a symlink (to {os.readlink(ws / name)})" if stat.S_ISLNK(mode) else untrusted.kind_of(mode)


def check_conflicts(paths: list[str], workspace: Path, is_conflicted) -> Check:
    """Merge-conflict markers left in changed files: never a passing verdict, never committed."""
    found = [p for p in paths if is_conflicted(workspace / p)]
    if not found:
        return Check("conflicts", True, "conflicts: no conflict markers")
    return Check("conflicts", False, f"conflicts: {len(found)} file(s) with merge-conflict markers",
                 [f"CONFLICT MARKERS in {p}: resolve them (not committed while they remain)" for p in found[:8]])


def unreadable(name: str, exc: BaseException) -> Check:
    """A check whose input could not be read fails, with the reason, instead of stopping the supervisor."""
    why = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return Check(name, False, f"{name}: could not be checked ({why})", [f"{name} could not be checked: {why}"])
