"""A judge that is down never ends a run as verified done: it is asked again, with backoff, up to ``[judge]
max_wait`` (as an API overload of the agent is waited out), then the run is held for a person.

While the supervisor waits it keeps its heartbeat and reads its inbox (a `stop` still stops), and each wait is a
``judge.waiting`` event, so `status` and the TUI say what the run is doing. Only the judge is asked again: the
oracle and the tests of the same stop stand. A judge that cannot come back by itself (no key, a refused model, a
logged-out CLI, a spent cap) holds the run at once, with the reason and its fix. After a person resumes a held
run the same stop is verified afresh (``verify.retried``), so a judge that is back by then decides. The wait's
deadline is in each ``judge.waiting`` event: a supervisor restarted during the wait keeps it.
"""
from __future__ import annotations

import time
from typing import Any

from nightshift.supervisor.verify.pipeline import StopContext, Verdict, rejudge

FIRST_DELAY = 30.0   # seconds before the first question again; doubled each time
LONGEST_DELAY = 600.0


def judge_down(verdict: Verdict | dict[str, Any] | None) -> bool:
    """Was the judge asked about this verdict and gave no answer? (A fold of events or a fresh Verdict.)"""
    judge = verdict.judge if isinstance(verdict, Verdict) else (verdict or {}).get("judge")
    return bool(judge) and not judge.get("available")


def first_delay(max_wait: float) -> float:
    """Short waits are split into several tries; long ones start at FIRST_DELAY."""
    return max(1.0, min(FIRST_DELAY, max_wait / 8))


def wait_for_judge(sup, ctx: StopContext, verdict: Verdict) -> Verdict:
    """Ask the judge again with backoff while it is down for a reason that may pass, until ``max_wait``."""
    max_wait = sup.config.judge.max_wait
    deadline = kept_deadline(sup.state, ctx) or time.time() + max_wait
    delay, tries = first_delay(max_wait), 1
    while judge_down(verdict) and verdict.judge.get("retry") and not sup.stop_requested:
        now = time.time()
        if now >= deadline:
            break
        until = min(now + delay, deadline)
        sup.emit("judge.waiting", ctx.shift, turn=ctx.turn, until=until, tries=tries,
                 error=verdict.judge.get("error"), deadline=deadline)
        sup.say(f"shift {ctx.shift}: the judge is unavailable ({verdict.judge.get('error')}); asking again at "
                f"{time.strftime('%H:%M:%S', time.localtime(until))}")
        sup.sleep_until(until)
        if sup.stop_requested:
            break
        verdict = rejudge(ctx, verdict)
        delay, tries = min(delay * 2, LONGEST_DELAY), tries + 1
    return verdict


def kept_deadline(state: dict[str, Any], ctx: StopContext) -> float | None:
    """The deadline of a wait for this same stop that a previous supervisor began (from the log), if any: a restart
    mid-wait does not give the judge a fresh ``max_wait``. A wait after a person's `resume` starts afresh (the
    hold's verify.finished ended the old one)."""
    wait = state.get("judge_wait") or {}
    if wait.get("deadline") and (wait.get("shift"), wait.get("turn")) == (ctx.shift, ctx.turn):
        return float(wait["deadline"])
    return None


def hold_reason(run_id: str, verdict: dict[str, Any], max_wait: float, config: Any) -> str:
    """Why the run is held, and what a person can do about it (``config`` is the run's frozen config.toml)."""
    judge = verdict.get("judge") or {}
    waited = f"after asking again for {_duration(max_wait)} " if judge.get("retry") else ""
    return (f"the judge is unavailable {waited}({judge.get('error')}); without it the verdict is not a pass: fix "
            f"the judge (or set [judge] enabled = false in {config}), then `nightshift resume {run_id}`")


def _duration(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g}h"
    return f"{seconds / 60:g}m" if seconds >= 60 and seconds % 60 == 0 else f"{seconds:g}s"
