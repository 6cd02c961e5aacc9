"""The report's "What needed a person" rows in words: for each recorded event that needed or got a person, what
happened and what to do about it, never the event's raw fields. Texts the events carry (a reason, a refusal's
message) are quoted whole or cut at a word with an ellipsis, never mid-word.

Event types come from several parts of nightshift, some newer than this file: a type not described here is still
shown (a new kind of refusal is never hidden), named with the words of its fields, with `nightshift log` as where
to read it whole.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

LONGEST = 300  # characters of a quoted text in one row


def clip(text: Any, limit: int = LONGEST) -> str:
    """``text`` on one line, cut at the last word boundary within ``limit`` (with an ellipsis) if longer."""
    words = " ".join(str(text or "").split())
    if len(words) <= limit:
        return words
    cut = words[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " …"


def _clock(when: Any) -> str:
    """An epoch or an ISO time as 'HH:MM:SS UTC' (the date when it is not today's in the log, is in the row)."""
    try:
        if isinstance(when, str) and not when.replace(".", "", 1).isdigit():
            at = dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
        else:
            at = dt.datetime.fromtimestamp(float(when), dt.timezone.utc)
        return at.astimezone(dt.timezone.utc).strftime("%H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError, OSError):
        return "a later time"


def _resume(run_id: str, reason: str) -> str:
    return "" if "resume" in reason else f"; then `nightshift resume {run_id}`"


PAUSE_LABELS = {"blocked": "the agent said it is blocked", "breaker": "paused by the breaker",
                "budget": "paused: a budget was spent", "dialog": "waiting for a person at the agent's screen",
                "user": "paused by a person", "judge": "held for a person: the judge was down",
                "crashloop": "held for a person: the supervisor kept dying",
                "heldout": "held for a person: the held-out comparisons", "git": "held: git could not commit"}


# Events nightshift answered by itself: worth a row for the record, but nobody had to do anything (the report's
# count of what "needed a person" leaves them out). A passed preflight, an API wait it sat out, a judge asked again,
# a stall it nudged or restarted, a supervisor the watchdog revived, the test ratchet's start.
_HANDLED = {"preflight.finished", "agent.stalled", "supervisor.revived", "judge.waiting", "tests.baseline"}


def needed_person(kind: str, d: dict[str, Any]) -> bool:
    """Whether an event of type ``kind`` (with data ``d``) needed (or got) a person, as opposed to one nightshift
    handled by itself. A type not known here counts as needing one: a new kind of refusal is never played down."""
    if kind == "preflight.finished":
        return not d.get("passed")
    if kind == "agent.waiting":
        return d.get("kind") == "human"  # an API's wait is sat out; a wait for a person's answer is not
    return kind not in _HANDLED


def person_line(kind: str, d: dict[str, Any], run_id: str) -> str | None:
    """One row's words for an event of type ``kind`` with data ``d``; None when it did not concern a person."""
    if kind == "run.paused":
        from nightshift.supervisor.cli.watch.outcome import pause_kind  # older runs recorded only the reason's text
        what = pause_kind({"paused": True, "pause_kind": d.get("kind"), "pause_reason": d.get("reason")})
        reason = clip(d.get("reason"))
        if what == "user":
            return f"paused by a person: `nightshift resume {run_id}` continues it"
        return f"{PAUSE_LABELS.get(what, 'paused')}: {reason}{_resume(run_id, reason)}"
    if kind == "breaker.tripped":
        return (f"the breaker tripped: {clip(d.get('reason'))}. Read the last push-backs, change the plan or the "
                f"approach in CLAUDE.md, then `nightshift resume {run_id}`")
    if kind == "budget.exceeded":
        what, value, limit = d.get("what"), d.get("value"), d.get("limit")
        if what == "heldout_budget":
            return (f"the held-out budget was spent ({value} of {limit} bits released): a person looks at the work; "
                    f"raise [oracle] heldout_budget to let the agent be told more")
        return (f"budget spent: {what} reached {value} (limit {limit}); raise [limits] {what} in the run's "
                f"config.toml, then `nightshift resume {run_id}`")
    if kind == "agent.waiting" and d.get("kind") == "human":
        return (f"the agent waited for a person: {clip(d.get('what'))}; answered by `nightshift approve {run_id}` "
                f"or `nightshift deny {run_id}` (when nobody answers: {d.get('on_wait') or 'its policy'})")
    if kind == "agent.waiting":
        return (f"the model's API asked to wait ({clip(d.get('reason') or 'a limit', 160)}); nightshift waited "
                f"until {_clock(d.get('until'))} and went on: nothing to do unless it recurs")
    if kind == "agent.wait_answered":
        return f"the agent's wait was answered: {d.get('answer')} (by {d.get('by') or 'a person'})"
    if kind == "command.accepted":
        verb = d.get("verb")
        if verb == "nudge":
            return f"a person nudged the agent: \"{clip((d.get('args') or {}).get('message', ''))}\""
        return f"a person ran `nightshift {verb}`" if verb in ("pause", "resume", "stop", "approve", "deny") else None
    if kind == "judge.unavailable":
        return (f"the judge gave no verdict ({clip(d.get('error'), 200)}): fix its key, model or CLI login (or set "
                f"[judge] enabled = false), then `nightshift resume {run_id}`")
    if kind == "judge.waiting":
        return (f"the judge gave no verdict ({clip(d.get('error'), 200)}); asked again (try {d.get('tries')}) "
                "until [judge] max_wait: nothing to do unless the run is held")
    if kind == "agent.stalled":
        done = "it was nudged" if d.get("action") == "nudged" else "its shift was ended and a fresh one started"
        return (f"the agent printed nothing for {d.get('silent')}: {done}; if this recurs, read the turn's log "
                f"(`nightshift attach {run_id}`) or raise [limits] stall_after")
    if kind == "supervisor.revived":
        return (f"the supervisor had died ({clip(d.get('reason'), 200)}); the {d.get('by') or 'watchdog'} started "
                "a new one, which adopted the live agent")
    if kind == "policy.denied":
        tool, given, rule = d.get("tool"), d.get("input"), d.get("rule")
        thing = f"{tool}: {clip(given, 120)}" if tool and given else clip(given or rule or tool or "an action", 120)
        why = clip(d.get("message") or d.get("reason") or (rule if given else ""), 200)
        return (f"the run's policy refused {thing}{(' (' + why + ')') if why else ''}; nothing to do unless the work "
                "needs it: then change [policy] in nightshift.toml")
    if kind == "policy.sandbox":
        return _sandbox_line(d)
    if kind == "preflight.finished":
        problems = d.get("problems") or []
        gap = (f"; starting gap: worst {d['metric']:.3g}x the tolerance"
               if isinstance(d.get("metric"), (int, float)) else "")
        if d.get("passed"):
            return f"the preflight passed{gap}"
        return (f"the preflight found {len(problems)} problem(s){gap}: {clip('; '.join(map(str, problems)), 200)}; "
                "`nightshift check` shows each with its fix")
    if kind == "tests.baseline":  # the test ratchet's start, for a person when it left flaky tests out or counts totals
        flaky = d.get("flaky") or []
        if not flaky and d.get("per_test"):
            return None
        counted = f"{len(d.get('passing') or [])} passing tests" if d.get("per_test") else \
            f"{d.get('passed_total')} passing tests (totals only)" if d.get("passed_total") is not None else \
            "no readable count of passing tests (only the exit status counts)"
        shown = ", ".join(flaky[:10]) + (" ..." if len(flaky) > 10 else "")
        started = f"test ratchet started ({d.get('source')}) from {counted}"
        return started + (f"; flaky, left out: {shown}" if flaky else "")
    if kind == "test.released":
        tests = d.get("tests") or []
        return (f"released from the test ratchet by {d.get('by') or 'a person'}: {', '.join(tests[:10])}"
                + (f" and {len(tests) - 10} more" if len(tests) > 10 else "") + f" ({clip(d.get('why'))})")
    if kind == "preflight.skipped":
        return f"the preflight was skipped ({clip(d.get('reason'))}): `nightshift check` runs it"
    if kind.startswith(("preflight", "budget.", "approval.", "slurm.", "core_hours", "policy.")):
        fields = "; ".join(f"{k.replace('_', ' ')} {clip(v, 80)}" for k, v in list(d.items())[:4])
        return f"{kind.replace('.', ' ').replace('_', ' ')}: {fields} (`nightshift log {run_id}` has it whole)"
    return None


def _sandbox_line(d: dict[str, Any]) -> str | None:
    """Only a boundary that did not hold concerned a person: which doors were open and how to close them."""
    if d.get("available") or d.get("namespace"):
        return None
    doors = [str(x) for x in d.get("doors") or []]
    problem = clip(d.get("problem") or "no namespace could be made", 400)  # its cause and that cause's fix
    held = f"; held instead by {d['label']}" if d.get("label") and d.get("tier") not in (None, "off") else ""
    open_ = f"; {len(doors)} door(s) open, e.g. {clip(doors[0].split(': ', 1)[-1], 160)}" if doors else ""
    return (f"the agent's processes ran without nightshift's namespace ({problem}){held}{open_}; "
            "`nightshift doctor` says the fix for its cause")
