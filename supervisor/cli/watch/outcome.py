"""A run's outcome for scripts and people: the exit codes of `nightshift wait` and `run --foreground`, and the
one-line "can I trust this?" answer that ends `nightshift status`.

Exit codes (documented in README.md, "Waiting for the answer"): 0 only when the run ended verified done.
A judge that was down is never a pass: its verdict fails, and the run is held for a person (NEEDS_PERSON).
"""
from __future__ import annotations

import sys
import time
from typing import Any


DONE, BLOCKED, BUDGET, BREAKER, STOPPED, FAILED, NEEDS_PERSON, NO_SUPERVISOR, TIMEOUT = 0, 10, 11, 12, 13, 14, 15, 16, 124
MEANING = {DONE: "verified done", BLOCKED: "the agent is blocked", BUDGET: "budget spent", BREAKER: "breaker tripped",
           STOPPED: "stopped", FAILED: "failed", NEEDS_PERSON: "paused, waiting for a person",
           NO_SUPERVISOR: "no supervisor is running it", TIMEOUT: "still running at the timeout"}


def pause_kind(state: dict[str, Any]) -> str | None:
    """Why a run is paused; older runs recorded only the reason's text."""
    if not state.get("paused"):
        return None
    kind = state.get("pause_kind")
    if kind:
        return kind
    reason = str(state.get("pause_reason") or "")
    for prefix, name in (("budget spent", "budget"), ("breaker", "breaker"), ("the agent is blocked", "blocked")):
        if reason.startswith(prefix):
            return name
    return "user" if "user" in reason or "by the user" in reason else "other"


def outcome_code(state: dict[str, Any]) -> int | None:
    """The exit code the run's state gives now, or None while it is still working (or paused by a person)."""
    if state.get("phase") == "finished":
        outcome = state.get("outcome")
        if outcome == "done" and (state.get("last_verdict") or {}).get("passed"):
            return DONE
        return STOPPED if outcome == "stopped" else FAILED
    kind = pause_kind(state)
    if kind in ("blocked", "budget", "breaker"):
        return {"blocked": BLOCKED, "budget": BUDGET, "breaker": BREAKER}[kind]
    if kind in ("dialog", "cannot_start", "heldout", "judge", "crashloop"):
        return NEEDS_PERSON
    return None  # working, or paused by a person who will resume it


def wait_main(ref: str | None, timeout: float | None, poll: float = 1.0, dead_grace: float = 30.0) -> int:
    """`nightshift wait RUN`: block until the run has an outcome; print it and exit with its code."""
    from nightshift.supervisor.run.liveness import supervisor_status
    from nightshift.supervisor.run.registry import find_run
    from nightshift.supervisor.run.state import load_state

    run = find_run(ref)
    start = time.monotonic()
    dead_since: float | None = None
    while True:
        state, _, _ = load_state(run.root)
        code = outcome_code(state)
        if code is not None:
            print(f"run {run.run_id}: {MEANING[code]} (exit {code})" + _detail(state))
            return code
        now = time.monotonic()
        if supervisor_status(run.supervisor)["alive"]:
            dead_since = None
        else:
            dead_since = dead_since if dead_since is not None else now
            if now - dead_since >= dead_grace:  # a fresh run may not have its supervisor up yet: give it time
                print(f"run {run.run_id}: no supervisor is running it; `nightshift resume {run.run_id}` "
                      f"(exit {NO_SUPERVISOR})", file=sys.stderr)
                return NO_SUPERVISOR
        if timeout is not None and now - start >= timeout:
            print(f"run {run.run_id}: still {state.get('status')} after {timeout:g}s (exit {TIMEOUT})", file=sys.stderr)
            return TIMEOUT
        time.sleep(poll)


def _detail(state: dict[str, Any]) -> str:
    reason = state.get("finish_reason") or state.get("pause_reason")
    return f": {reason}" if reason else ""


def verdict_commit(state: dict[str, Any]) -> str | None:
    """The commit the last verdict checked: HEAD when the supervisor committed after it (the agent's own commits
    included, which leave nothing for us to commit); before that commit, HEAD at a passing verdict, else the last
    commit recorded."""
    if state.get("verdict_head"):
        return state["verdict_head"]
    verdict = state.get("last_verdict") or {}
    if verdict.get("passed") and state.get("accepted_base"):
        return state["accepted_base"]
    for row in reversed(state.get("shifts") or []):
        commits = [c for c in row.get("commits") or [] if c]
        if commits:
            return commits[-1]
    return state.get("accepted_base")


def judge_words(state: dict[str, Any]) -> str:
    """What the judge did at the last verdict: ran (with its criteria), unavailable (held or not), did not run."""
    verdict = state.get("last_verdict") or {}
    judge = verdict.get("judge") if isinstance(verdict.get("judge"), dict) else None
    if judge and judge.get("available"):
        findings = judge.get("findings") or []
        passes = sum(1 for f in findings if f.get("verdict") == "PASS")
        return f"ran ({passes}/{len(findings)} criteria pass)"
    if judge and pause_kind(state) == "judge":
        return "unavailable: the run is held for a person (not a pass)"
    return "unavailable (not counted as a pass)" if judge else "did not run"


def trust_line(state: dict[str, Any], heldout: bool | None = None) -> str:
    """One line: may I trust this run's answer? The verdict, its commit, the judge, refused rules, and (``heldout``
    False) that nothing is held out, so a memorised answer would pass."""
    verdict = state.get("last_verdict") or {}
    sha = (verdict_commit(state) or "")[:10] or "no commit"
    code = outcome_code(state)
    sandbox = verdict.get("sandbox")  # the boundary's tier at that verdict (sandbox/tier.py)
    if code == DONE and sandbox and sandbox != "full":
        head = f"yes, within a weaker boundary: verified done at commit {sha}, sandbox: {sandbox} (not full)"
    elif code == DONE:
        head = f"yes: verified done at commit {sha}" + (", sandbox: full" if sandbox else "")
    elif not verdict:
        head = "not yet: no verdict so far"
    elif state.get("phase") == "finished":
        head = f"no: the run ended {state.get('outcome')} without a verified done; last verdict at commit {sha} " \
               f"{'passed' if verdict.get('passed') else 'failed'}"
    else:
        head = f"not yet: last verdict at commit {sha} {'passed' if verdict.get('passed') else 'failed'}"
    judged = f"judge {judge_words(state)}"
    refused = int(state.get("refusals") or 0)  # counted by the fold: no pass over the log
    rules = "no rule refused during the run" if not refused else \
        f"{refused} action{'s' if refused != 1 else ''} refused by the policy during the run (see `nightshift report`)"
    line = f"trust      {head}; {judged}; {rules}"
    if heldout is False:
        from nightshift.supervisor.cli.watch.heldout import NOTHING_HELD
        line += f"; {NOTHING_HELD}"
    return line
