"""What follows a committed stop: the run is done (verified and claimed), paused (blocked, a budget spent, the
breaker open), or the agent is pushed back, in its live session up to a limit, else in a fresh shift that
orients itself from CLAUDE.md and CHANGELOG.md (a context reset). The push-back says what is wrong, measured.
"""
from __future__ import annotations

import time
from typing import Any

from nightshift.supervisor.run.allocation import allocation
from nightshift.supervisor.shift.attest_done import attest_done
from nightshift.supervisor.shift.judge_wait import judge_down
from nightshift.supervisor.shift.turns import pushback_text, write_private

# Stops after which the agent's session is gone: the next turn is a fresh shift, oriented from the notes.
SESSION_ENDERS = ("lost", "timeout", "budget", "stopped", "walltime", "preempted", "cancelled", "job_failed",
                  "vanished", "job_ended", "stalled", "helper_lost")


def decide(sup) -> None:
    """``sup`` is the shift loop (shift.loop.Supervisor): its state, ledger, session, pause and finish."""
    s, limits = sup.state, sup.config.limits
    verdict, stop = s["last_verdict"], s["last_stop"] or {}
    claim = verdict.get("claimed")
    if verdict["passed"] and claim == "done":
        sup.session.release()
        attest_done(sup)  # the verified result, signed, beside the run and as a git note (supervisor/attest)
        return sup.finish("done", (stop.get("claim") or {}).get("summary", "verified"))
    if s["paused"]:
        return sup.wait_while_paused()
    if judge_down(verdict):  # held for the judge, and resumed (or restarted): verify the same stop afresh
        return sup.emit("verify.retried", s["shift"], turn=s["turn"], reason="the judge was unavailable")
    gone = (verdict.get("heldout") or {}).get("unavailable")
    if gone:
        sup.session.release()
        return sup.pause("heldout", "; ".join(gone.values()))
    if claim == "done" and (verdict.get("heldout") or {}).get("withheld"):
        return pause_for_heldout(sup)
    if claim == "blocked" and s.get("blocked_at") != [s["shift"], s["turn"]]:  # resumed by a person: pushed back
        sup.session.release()
        return sup.pause("blocked", f"the agent is blocked: {(stop.get('claim') or {}).get('summary', '')}")
    if sup.ledger.hours_used() > limits.max_hours:
        return sup.pause_for_budget("max_hours", limits.max_hours, round(sup.ledger.hours_used(), 2))
    if limits.max_cost_usd and s["cost_usd"] >= limits.max_cost_usd:
        return sup.pause_for_budget("max_cost_usd", limits.max_cost_usd, round(s["cost_usd"], 4))
    if limits.max_core_hours or limits.max_gpu_hours:
        sup.session.settle()  # the turn's job ends just after its agent: count its own record, not a guess
    spent = allocation(s, time.time(), sup.run_paths.root)  # a job still running counts from its start
    if limits.max_core_hours and spent.core_hours >= limits.max_core_hours:
        return sup.pause_for_budget("max_core_hours", limits.max_core_hours, round(spent.core_hours, 4))
    if limits.max_gpu_hours and spent.gpu_hours >= limits.max_gpu_hours:
        return sup.pause_for_budget("max_gpu_hours", limits.max_gpu_hours, round(spent.gpu_hours, 4))
    if s["stale_stops"] >= limits.breaker_stops:
        sup.emit("breaker.tripped", s["shift"], stops=s["stale_stops"],
                 reason=f"{s['stale_stops']} stops in a row with no diff and no better verdict")
        sup.session.release()
        return sup.pause("breaker", f"breaker: {s['stale_stops']} stops with no change and no progress")
    text = pushback_text(findings(s["last_verdict"]) + refusal_lines(s.get("recent_refusals") or []), claim,
                         s["nudges"])
    if can_push_in_session(s, sup.config.agent, stop):
        return push_in_session(sup, text)
    sup.session.release()
    sup.emit("shift.ended", s["shift"], reason=shift_end_reason(s, sup.config.agent, stop))
    sup.start_shift()


def pause_for_heldout(sup) -> None:
    """A claim of done past the held-out budget that does not pass: the agent is told nothing more; a person
    looks at the work, and may raise the budget."""
    s, oracle = sup.state, sup.config.oracle
    # the budget that withheld (the held-out tests' record names its own); else the references', where an oracle is
    withheld_by = (s["last_verdict"].get("heldout") or {}).get("withheld_by")
    key = withheld_by or ("[oracle] heldout_budget" if oracle is not None else "[verify] heldout_budget")
    budget = oracle.heldout_budget if key.startswith("[oracle]") else sup.config.verify.heldout_budget
    bits = round(float((s.get("heldout") or {}).get("bits") or 0.0), 3)
    sup.emit("budget.exceeded", s["shift"], what="heldout_budget", limit=budget, value=bits)
    sup.session.release()
    sup.pause("budget", f"held-out budget spent: {bits:g} bits released (limit {budget:g}) and the claim of done "
                        f"does not pass; look at the work (`nightshift report {sup.run_paths.run_id}`), raise "
                        f"{key} in {sup.run_paths.config} to tell the agent more, and "
                        f"`nightshift resume {sup.run_paths.run_id}`")


def findings(verdict: dict[str, Any]) -> str:
    lines = []
    for check in verdict.get("checks", []):
        if not check["passed"]:
            lines.append(f"- {check['summary']}")
            lines += [f"    {line}" for line in check.get("lines", [])]
        else:
            lines += [f"- {note}" for note in check.get("notes", [])]
    body = "\n".join(lines) or "- every check passes, but you did not claim the goal is met"
    tier = verdict.get("sandbox")
    if not tier or tier == "full":
        return body
    # the boundary the agent works in, and what it means for its files (sandbox/tier.py)
    from nightshift.supervisor.sandbox.tier import LEFT_OPEN
    limit = [item for item in LEFT_OPEN.get(tier, ()) if item.startswith("and one limit: ")]
    return (f"- this verdict was reached in sandbox: {tier}, weaker than the full sandbox"
            + (f"; {limit[0][len('and one limit: '):]}" if limit else "") + "\n" + body)


def refusal_lines(refusals: list[dict[str, Any]]) -> str:
    """What the boundary refused since the last push-back, so the agent stops trying it."""
    if not refusals:
        return ""
    lines = ["", "- refused by the run's policy since your last stop (these stay refused; do it another way):"]
    lines += [f"    {r.get('tool')}: {r.get('input')}: {r.get('message')}" for r in refusals[-10:]]
    return "\n".join(lines)


def can_push_in_session(s: dict[str, Any], cfg, stop: dict[str, Any]) -> bool:
    if stop.get("reason") in SESSION_ENDERS:
        return False
    if s["pushbacks_in_shift"] >= cfg.max_pushbacks_per_shift:
        return False
    used = stop.get("context_tokens")
    if used and used >= cfg.context_reset_fraction * cfg.context_window:
        return False  # a context reset beats a push-back the agent has no room to act on
    return True


def shift_end_reason(s: dict[str, Any], cfg, stop: dict[str, Any]) -> str:
    if stop.get("reason") in SESSION_ENDERS:
        return stop["reason"]
    if s["pushbacks_in_shift"] >= cfg.max_pushbacks_per_shift:
        return "pushback_limit"
    return "context"


def push_in_session(sup, text: str) -> None:
    s = sup.state
    nxt = s["turn"] + 1
    prompt_file = write_private(sup.run_paths.turn_file(s["shift"], nxt, "prompt.md"), text)
    delivery = "launch"
    if sup.session.agent.hook_driven:
        delivery = sup.session.deliver_live(text)
        if delivery is None:  # the session is gone: start afresh
            sup.emit("shift.ended", s["shift"], reason="session_gone")
            return sup.start_shift()
    sup.emit("pushback.sent", s["shift"], turn=nxt, mode="session", delivery=delivery,
             prompt_file=str(prompt_file), summary=s["last_verdict"]["summary"][:300])
    sup.say(f"shift {s['shift']}: pushed back in session (turn {nxt})")
