"""The judge's outcome and its one retry rule, shared by both ways of asking (the API in call.py, the agent's CLI in
cli_call.py): a malformed answer is asked again once, then the judge is *unavailable*.

Each way of asking supplies one ``attempt``; this module decides what its answer means. An unavailable outcome says
whether waiting may help (``retry``: an overload, a timeout, a malformed answer) or a person must act (no key, a
refused model, a logged-out CLI, a spent cap): the shift loop waits out the first kind up to ``[judge] max_wait`` and
holds the run for a person at once on the second (see shift/judge_wait.py). Either way it is never a pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from nightshift.supervisor.verify.judge.prompt import MalformedVerdict, parse_verdict, pushback_lines


@dataclass
class JudgeOutcome:
    available: bool             # False: no key, refused model, 429/529 after retries, timeout, malformed twice, cap
    passed: bool                # True only if available and every criterion PASSes
    findings: list[dict] = field(default_factory=list)  # {"criterion", "verdict", "evidence", "fix"}
    cost_usd: float = 0.0
    error: str | None = None    # one line when unavailable
    pushback: list[str] = field(default_factory=list)  # lines for the push-back quoting the FAIL findings
    notes: list[str] = field(default_factory=list)     # e.g. "no price known for model …"
    via: str = "api"            # "api" (the SDK with a key) or "agent" (the agent's CLI, e.g. a subscription login)
    retry: bool = False         # unavailable for a reason that may pass by itself (worth waiting for)


@dataclass
class Attempt:
    """One question to the judge: the answer's tool-use blocks, or why there is none."""
    cost: float = 0.0
    content: list[Any] | None = None  # blocks for parse_verdict
    malformed: str | None = None      # the answer could not be read: ask once more, saying why
    error: str | None = None          # no answer: the judge is unavailable now
    retry: bool = True                # with ``error``: may it pass by itself (overload, timeout)?
    detail: str = ""                  # added to a parse failure's reason (e.g. the stop_reason)


def ask_twice(attempt: Callable[[str | None, float], Attempt], rubric: list[str], via: str,
              notes: list[str] | None = None) -> JudgeOutcome:
    """``attempt(retry_reason, cost_so_far)`` asks once; a malformed answer is asked again once, with the reason."""
    notes = list(notes or [])
    cost, retry_reason = 0.0, None
    for _ in range(2):
        answer = attempt(retry_reason, cost)
        cost += answer.cost
        if answer.error:
            return JudgeOutcome(False, False, [], cost, answer.error, [], notes, via, retry=answer.retry)
        if answer.malformed:
            retry_reason = answer.malformed
            continue
        try:
            findings = parse_verdict(answer.content or [], rubric)
        except MalformedVerdict as exc:
            retry_reason = f"{exc}{answer.detail}"
            continue
        passed = all(f["verdict"] == "PASS" for f in findings)
        return JudgeOutcome(True, passed, findings, cost, None, pushback_lines(findings), notes, via)
    # A model that twice fails to use its tool usually answers on a later try: worth waiting for.
    return JudgeOutcome(False, False, [], cost, f"the judge's answer was malformed twice ({retry_reason})", [],
                        notes, via, retry=True)
