"""A run's events told as a story, one line each (`nightshift log`, `nightshift demo`)."""
from __future__ import annotations

import re
from typing import Any

from nightshift.supervisor.run.shown import plain


def describe(event: dict[str, Any]) -> str | None:
    """The event's line, with everything in it shown as text (run/shown.py): one line, whatever the agent wrote,
    but for a verdict, whose failing checks' lines follow it indented."""
    line = _describe(event)
    if line is None or event.get("type") == "verify.finished":  # its parts are made plain where they are joined
        return line
    return plain(line, one_line=True)


def _describe(event: dict[str, Any]) -> str | None:
    kind, d, n = event["type"], event.get("data") or {}, event.get("shift")
    at = f"shift {n}: " if n else ""
    if kind == "run.created":
        return f"run {d.get('run_id')} created: {d.get('goal') or '(no goal)'} [{d.get('agent')} agent, {d.get('backend')}]"
    if kind == "preflight.finished":
        figure = f"; oracle today: {d.get('summary')}" if d.get("summary") else ""
        return f"preflight {'passed' if d.get('passed') else 'found problems: ' + '; '.join(d.get('problems') or [])}" \
               f"{figure}"
    if kind == "preflight.skipped":
        return f"preflight skipped ({d.get('reason')})"
    if kind == "tests.baseline":
        counted = (f"{len(d.get('passing') or [])} tests" if d.get("per_test")
                   else f"{d.get('passed_total')} (totals only)" if d.get("passed_total") is not None
                   else "no readable count (only the exit status counts)")
        flaky = d.get("flaky") or []
        return (f"test ratchet starts from {counted} passing ({d.get('source')}; {d.get('runs_said')})"
                + (f"; flaky, left out: {', '.join(flaky[:5])}{' ...' if len(flaky) > 5 else ''}" if flaky else ""))
    if kind == "test.released":
        tests = d.get("tests") or []
        return (f"{at}released from the test ratchet by {d.get('by')}: {', '.join(tests[:5])}"
                f"{' ...' if len(tests) > 5 else ''} ({d.get('why')})")
    if kind == "shift.started":
        return f"{at}started"
    if kind == "agent.started":
        return f"{at}agent turn {d.get('turn')} launched"
    if kind == "agent.adopted":
        return f"{at}agent turn {d.get('turn')} adopted after a supervisor restart"
    if kind == "agent.stopped":
        claim = d.get("claim")
        said = f"; claims {claim['status']}: {claim['summary']}" if claim else "; no claim"
        cost = f" (${d['cost_usd']:.4f})" if d.get("cost_usd") else ""
        return f"{at}agent stopped ({d.get('reason')}){said}{cost}"
    if kind == "agent.waiting" and d.get("kind") == "human":
        return f"{at}WAITING for {d.get('what')} (nightshift approve / deny; policy: {d.get('on_wait')})"
    if kind == "agent.wait_answered":
        return f"{at}the wait was answered ({d.get('answer')}, by {d.get('by')})"
    if kind == "policy.denied":
        return f"{at}refused {d.get('tool')} {d.get('input')}: {d.get('message')}"
    if kind == "policy.sandbox":
        return _boundary(d)
    if kind == "agent.waiting":
        return f"{at}API limit, waiting: {d.get('reason')}"
    if kind == "verify.finished":
        lines = [f"{at}verdict {plain(d.get('summary'), one_line=True)}"]
        for check in d.get("checks", []):
            if not check.get("passed"):
                lines += [f"    {plain(line, one_line=True)}" for line in check.get("lines", [])[:4]]
        return "\n".join(lines)
    if kind == "commit.created":
        left = f" (left out, conflict markers: {', '.join(d['conflicts'][:3])})" if d.get("conflicts") else ""
        return f"{at}committed {str(d.get('sha'))[:10]}{left}{_filtered(d)}"
    if kind == "pushback.sent":
        how = "in the same session" if d.get("mode") == "session" else d.get("mode")
        return f"{at}pushed back {how} (turn {d.get('turn')})"
    if kind == "shift.ended":
        return f"{at}ended ({d.get('reason')})"
    if kind in ("budget.exceeded", "breaker.tripped"):
        return f"{at}{kind}: {d}"
    if kind == "judge.unavailable":
        return f"{at}judge unavailable ({d.get('error')}); the deterministic verdict stands"
    if kind == "run.paused":
        return f"run paused: {d.get('reason')}"
    if kind == "run.resumed":
        return "run resumed"
    if kind in ("command.accepted", "command.rejected"):
        return f"command {d.get('verb')} {kind.split('.')[1]}" + (f": {d['reason']}" if d.get("reason") else "")
    if kind == "run.finished":
        return f"run finished: {str(d.get('outcome')).upper()} ({d.get('reason')})"
    if kind == "supervisor.crashed":
        return f"supervisor crashed: {d.get('reason')}"
    if kind == "workspace.recorded" and d.get("dirty"):
        return (f"{d.get('dirty')} path(s) dirty or untracked before the run (e.g. {', '.join(d.get('paths', [])[:3])}): "
                f"committed only if the agent changes them")
    if kind == "commit.skipped" and d.get("conflicts"):
        return f"{at}not committed: conflict markers in {', '.join(d['conflicts'][:3])}"
    if kind == "commit.skipped" and (d.get("filtered") or d.get("refused")):
        return f"{at}nothing committed{_filtered(d)}"
    if kind == "attest.written":  # issue #31: the verdict's signed attestation
        who = f"signed by {d.get('fingerprint')}" if d.get("signed") else "UNSIGNED"
        said = "".join(f"; {problem}" for problem in d.get("problems") or [])  # e.g. how to get a key: the fix
        return f"{at}attestation of verdict {d.get('verdict')} written ({who}): {d.get('path')}{said}"
    if kind == "attest.failed":
        return f"{at}attestation not written: {d.get('error')}"
    if kind == "notify.failed":  # the person was not told: the log says so
        return f"{at}the notification failed: {d.get('error')}"
    if kind == "slurm.job_changed":
        return f"{at}job {d.get('job_id')} {d.get('state')} {d.get('reason') or ''}".rstrip()
    return None


def _filtered(d: dict) -> str:
    """Paths a filter driver (e.g. Git LFS) would change: nightshift runs none, so they are left to the user; and
    what it never commits (commit_refusals: links out, files over the size limit, nested repositories)."""
    out = ""
    if d.get("filtered"):
        out += (f" (left for you to commit: {', '.join(d['filtered'][:3])}: its filter driver does not run in "
                "nightshift's git)")
    refused = d.get("refused") or {}
    if refused:
        words = {"link_out": "a symlink out of the workspace", "too_large": "over [verify] max_commit_mb",
                 "nested_repo": "a nested repository"}
        out += " (never committed, left for you: " + "; ".join(
            f"{', '.join(map(str, names[:3]))}: {words.get(kind, kind)}" for kind, names in refused.items()) + ")"
    return out


def _boundary(d: dict[str, Any]) -> str:
    """What holds the agent's processes, true for its kind: nightshift's namespace (or why there is none), Claude
    Code's own sandbox inside it where on, and the tool-call hook, which only Claude Code has."""
    hook = str(d.get("pretool_hook_line") or "")
    named = re.search(r"the (\w+) agent has no", hook)  # events before the agent was recorded named it here
    agent = d.get("agent") or (named.group(1) if named else "claude")
    held = d.get("namespace", d.get("available"))
    line = ("the agent's processes run in nightshift's namespace (bubblewrap)" if held else
            f"no namespace for the agent's processes: {d.get('problem')}")
    if not held and d.get("tier") in ("landlock", "seccomp"):  # the launcher's tier (sandbox/tier.py)
        line += f"; held by {d.get('label')} (left open: {'; '.join(d.get('left_open') or [])})"
    if held and d.get("claude_sandbox"):
        line += ", with Claude Code's own sandbox inside it"
    if agent == "claude":
        return line + (f"; {hook}" if hook else "") + ("" if held else " (the hook and the check at each stop hold "
                                                                     "the rules)")
    return line + f"; the {agent} agent has no tool-call hook: " + (
        "the namespace and the check at each stop hold the rules" if held else "only the check at each stop holds "
                                                                                 "the rules")
