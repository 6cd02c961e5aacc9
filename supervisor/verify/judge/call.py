"""The independent judge: a second model grades the work against a rubric, in a fresh context.

The verification pipeline calls ``gather_inputs`` then ``run_judge``. The judge reads the rubric, the diff
since the last accepted state, the oracle report, the test summary and the newest CHANGELOG entry (never the
agent's transcript); everything the agent wrote arrives as delimited data (see ``judge_prompt``). It answers
through a forced tool call, validated; a malformed answer is retried once (attempts.py, for both ways of asking),
then the judge is *unavailable*.

**The judge can only add failures, and fails closed.** The caller combines with AND: ``done =
deterministic_passed and outcome.available and outcome.passed``, see ``combine``. A PASS never turns a failing
oracle or test into done; an unavailable judge (no key, refused model, 429/529 after the SDK's retries, timeout,
malformed twice, cost cap) is never a pass: the shift loop waits for it (``retry``) or holds the run for a person.

``[judge] via``: "api" (below), "agent" (the agent's own CLI in a fresh tool-less session, see cli_call.py: a
CLI login is enough), "auto" (the API when a key is set, else the CLI). The rules are the same either way.

Calls go through the real Anthropic SDK (``anthropic.Anthropic()``: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
or ANTHROPIC_AUTH_TOKEN from the environment). The key is never logged, recorded or written. Cost comes from
the usage of each response; the caps per verdict and per run are checked before every call with the worst
case (estimated input, the largest answer allowed), and the answer's ``max_tokens`` is lowered to fit.
"""
from __future__ import annotations

import os

import anthropic

from nightshift.supervisor.config.judge import JudgeConfig
from nightshift.supervisor.pricing import Price, price_for, usage_cost
from nightshift.supervisor.verify.judge.attempts import Attempt, JudgeOutcome, ask_twice
from nightshift.supervisor.verify.judge.inputs import JudgeInputs, gather_inputs
from nightshift.supervisor.verify.judge.prompt import (INTEGRITY_CRITERIA, TOOL_NAME, VERDICT_TOOL, new_nonce, system_prompt,
                                            user_message)

__all__ = ["JudgeInputs", "JudgeOutcome", "gather_inputs", "run_judge", "combine", "rubric_for"]

MIN_ANSWER_TOKENS = 512  # below this a verdict on several criteria cannot fit: do not call
CHARS_PER_TOKEN = 3.0    # conservative (real text is nearer 4): the estimate errs toward the cap


def combine(deterministic_passed: bool, outcome: JudgeOutcome | None) -> bool:
    """The verdict with the judge: it can only add failures, never turn a failure into a pass. A judge that was
    asked and did not answer is not a pass either (fail closed): the user asked for a second opinion."""
    if outcome is None:
        return deterministic_passed
    return deterministic_passed and outcome.available and outcome.passed


def rubric_for(cfg: JudgeConfig, inputs: JudgeInputs) -> list[str]:
    rubric = list(dict.fromkeys(inputs.rubric))
    if cfg.integrity_checks:
        rubric += [c for c in INTEGRITY_CRITERIA if c not in rubric]
    return rubric


def run_judge(cfg: JudgeConfig, inputs: JudgeInputs, spent_usd: float) -> JudgeOutcome:
    """Grade ``inputs`` against the rubric; ``spent_usd`` is what this run's judge already spent. Never raises."""
    try:
        return _run_judge(cfg, inputs, spent_usd)
    except Exception as exc:  # noqa: BLE001 - a judge bug must never crash the supervisor or count as a pass
        return JudgeOutcome(False, False, error=f"the judge failed: {type(exc).__name__}: {_one_line(exc)}")


def resolve_via(cfg: JudgeConfig) -> str:
    """"api" or "agent": ``auto`` takes the API when a key is in the environment, else the agent's CLI."""
    if cfg.via != "auto":
        return cfg.via
    return "api" if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN") else "agent"


def _run_judge(cfg: JudgeConfig, inputs: JudgeInputs, spent_usd: float) -> JudgeOutcome:
    if resolve_via(cfg) == "agent":
        rubric = rubric_for(cfg, inputs)
        refusal = _precheck(cfg, rubric, spent_usd, need_key=False)
        if refusal:
            return JudgeOutcome(False, False, error=refusal, via="agent")
        from nightshift.supervisor.verify.judge.cli_call import cli_attempt
        return ask_twice(cli_attempt(cfg, inputs, rubric, spent_usd), rubric, "agent")
    price = price_for(cfg.model, cfg.price_usd_per_mtok)
    notes = [price.note] if price.note else []
    rubric = rubric_for(cfg, inputs)
    refusal = _precheck(cfg, rubric, spent_usd)
    if refusal:
        return JudgeOutcome(False, False, error=refusal, notes=notes)
    try:
        client = anthropic.Anthropic(timeout=cfg.timeout, max_retries=cfg.max_retries)
    except anthropic.AnthropicError as exc:
        return JudgeOutcome(False, False, error=f"the Anthropic client could not start: {_one_line(exc)}",
                            notes=notes)
    nonce = new_nonce()
    system = system_prompt(nonce)

    def attempt(retry_reason: str | None, cost: float) -> Attempt:
        user = user_message(inputs, rubric, nonce, retry_reason)
        max_tokens, why_not = _answer_budget(cfg, price, system, user, spent_usd, cost)
        if why_not:
            return Attempt(error=why_not, retry=False)
        try:
            response = client.messages.create(
                model=cfg.model, max_tokens=max_tokens, system=system, tools=[VERDICT_TOOL],
                tool_choice={"type": "tool", "name": TOOL_NAME},
                messages=[{"role": "user", "content": user}])
        except anthropic.APIError as exc:
            return Attempt(error=_api_error(exc, cfg), retry=_passes_by_itself(exc))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a body the SDK could not read
            return Attempt(malformed=f"unreadable response: {type(exc).__name__}: {_one_line(exc)}")
        return Attempt(cost=usage_cost(price, getattr(response, "usage", None) or {}),
                       content=getattr(response, "content", None) or [],
                       detail=f"; stop_reason {getattr(response, 'stop_reason', None)}")

    return ask_twice(attempt, rubric, "api", notes)


def _passes_by_itself(exc: anthropic.APIError) -> bool:
    """An overload, a rate limit, a timeout, a lost connection or a server error passes; a refusal does not."""
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    return status is None or status in (408, 409, 429, 529) or status >= 500


def _precheck(cfg: JudgeConfig, rubric: list[str], spent_usd: float, need_key: bool = True) -> str | None:
    if not cfg.enabled:
        return "the judge is disabled ([judge] enabled = false)"
    if not rubric:
        return "no rubric: CLAUDE.md has no 'Definition of done' items and [judge] criteria is empty"
    if spent_usd >= cfg.max_cost_usd:
        return (f"judge cost cap reached: ${spent_usd:.4f} spent of [judge] max_cost_usd ${cfg.max_cost_usd:g}; "
                "not called")
    if need_key and not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        return ("no ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the supervisor's environment: set it to use the "
                "judge, or set [judge] via = \"agent\" (or \"auto\") to judge through a logged-in claude CLI")
    return None


def _answer_budget(cfg: JudgeConfig, price: Price, system: str, user: str, spent_usd: float,
                   verdict_cost: float) -> tuple[int, str | None]:
    """max_tokens for the next call under both caps, or why the call must not be made."""
    budget = min(cfg.max_cost_per_verdict_usd - verdict_cost, cfg.max_cost_usd - spent_usd - verdict_cost)
    input_tokens = int((len(system) + len(user) + len(str(VERDICT_TOOL))) / CHARS_PER_TOKEN) + 1
    max_tokens = min(cfg.max_output_tokens, price.max_output_tokens(budget, input_tokens))
    if max_tokens < MIN_ANSWER_TOKENS:
        worst = price.cost(input_tokens, MIN_ANSWER_TOKENS)
        return 0, (f"judge cost cap: a call could cost ${worst:.4f} (about {input_tokens} input tokens) but only "
                   f"${max(budget, 0):.4f} is left under max_cost_per_verdict_usd ${cfg.max_cost_per_verdict_usd:g}"
                   f" / max_cost_usd ${cfg.max_cost_usd:g}; not called")
    return max_tokens, None


def _api_error(exc: anthropic.APIError, cfg: JudgeConfig) -> str:
    if isinstance(exc, anthropic.APITimeoutError):
        return f"no answer from the judge within {cfg.timeout:g}s (after {cfg.max_retries} retries)"
    if isinstance(exc, anthropic.APIConnectionError):
        return f"cannot reach the Anthropic API ({_one_line(exc)})"
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = body.get("error", {}) if isinstance(body, dict) else {}
    etype, message = detail.get("type", ""), _one_line(detail.get("message") or exc)
    if status in (429, 529) or etype in ("rate_limit_error", "overloaded_error"):
        return f"the API is {'overloaded' if status == 529 else 'rate limiting'} ({status} {etype}) after {cfg.max_retries} retries"
    if status == 401:
        return f"the API rejected the key (401 {etype}): check ANTHROPIC_API_KEY"
    if status in (400, 403, 404) and ("model" in message.lower() or status == 404):
        return (f"the API refused judge model {cfg.model!r} ({status} {etype}: {message}); set [judge] model to "
                "a model your key can use")
    return f"API error {status} {etype}: {message}"


def _one_line(value: object) -> str:
    text = str(value).strip().splitlines()
    return (text[0] if text else "")[:200]
