"""The judge through Claude Code's own CLI (``[judge] via = "agent"``, or "auto" without an API key), so a
CLI login (a subscription) is enough.

Each attempt is a fresh, tool-less print-mode session: ``claude -p --tools "" --json-schema <the verdict's
schema> --system-prompt <the judge's rules> --no-session-persistence --setting-sources "" --strict-mcp-config``,
run in an empty temporary folder (no CLAUDE.md, no project settings, no hooks), with the rubric and the quoted
material on stdin. The CLI answers through its structured-output tool; ``structured_output`` is validated by
``parse_verdict`` exactly as the API path validates its tool call, through the same loop (attempts.py):
malformed is retried once, then the judge is unavailable. Cost is the result's ``total_cost_usd``;
``--max-budget-usd`` holds each call under the caps.
A missing or logged-out CLI is "unavailable" with the fix, never a pass.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from typing import Callable

from nightshift.supervisor.config.judge import JudgeConfig
from nightshift.supervisor.verify.judge.attempts import Attempt
from nightshift.supervisor.verify.judge.inputs import JudgeInputs
from nightshift.supervisor.verify.judge.prompt import TOOL_NAME, VERDICT_TOOL, new_nonce, system_prompt, user_message

LOGIN_FIX = "run `claude` once and log in with /login (or `claude auth login`), or set ANTHROPIC_API_KEY"
CLI_NOTE = (f"\n\nYou answer through the StructuredOutput tool: it takes the input of {TOOL_NAME} "
            "(an object with one finding per criterion id). Use no other tool.")


def judge_env() -> dict[str, str]:
    """The supervisor's environment without nightshift's shift variables: the judge is no agent's session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIGHTSHIFT_")}
    env.setdefault("DISABLE_AUTOUPDATER", "1")
    return env


def cli_attempt(cfg: JudgeConfig, inputs: JudgeInputs, rubric: list[str], spent_usd: float
                ) -> Callable[[str | None, float], Attempt]:
    """One question through the CLI, for ``ask_twice`` (attempts.py owns the retry rule, as for the API path)."""
    binary = shutil.which(cfg.cli)
    nonce = new_nonce()
    system = system_prompt(nonce)

    def attempt(retry_reason: str | None, cost: float) -> Attempt:
        if not binary:
            return Attempt(error=(f"[judge] via runs the judge through the `{cfg.cli}` CLI, which is not on PATH; "
                                  "install Claude Code (`make tools`) or set ANTHROPIC_API_KEY and [judge] via = "
                                  "\"api\""), retry=False)
        budget = min(cfg.max_cost_per_verdict_usd - cost, cfg.max_cost_usd - spent_usd - cost)
        if budget <= 0:
            return Attempt(error=f"judge cost cap reached (${cost:.4f} this verdict); not called", retry=False)
        user = user_message(inputs, rubric, nonce, retry_reason) + CLI_NOTE
        result, problem, passes = _call(binary, cfg, system, user, budget)
        spent = float((result or {}).get("total_cost_usd") or 0.0)
        if problem:
            return Attempt(cost=spent, error=problem, retry=passes)
        answer = result.get("structured_output")
        if answer is None:
            said = _one_line(result.get("result"))
            return Attempt(cost=spent, malformed=f"no structured answer (the CLI said: {said})")
        return Attempt(cost=spent, content=[{"type": "tool_use", "name": TOOL_NAME, "input": answer}])

    return attempt


# Whole words only: the CLI's message names the API's host, and a port such as 127.0.0.1:40159 holds "401".
BUSY = re.compile(r"\b(429|529|overloaded|rate limit(ed)?|usage limit)\b", re.I)
NOT_LOGGED_IN = re.compile(r"\b(log ?in|not logged|api key|401)\b", re.I)


def _call(binary: str, cfg: JudgeConfig, system: str, user: str, budget: float
          ) -> tuple[dict | None, str | None, bool]:
    """One CLI session: (its result object, or None; a one-line reason it is unusable, or None; whether that
    reason may pass by itself: a busy API, a timeout)."""
    argv = [binary, "-p", "--output-format", "json", "--tools", "", "--json-schema",
            json.dumps(VERDICT_TOOL["input_schema"]), "--system-prompt", system, "--no-session-persistence",
            "--strict-mcp-config", "--setting-sources", "", "--max-budget-usd", f"{max(budget, 0.0001):.4f}"]
    if cfg.model:
        argv += ["--model", cfg.model]
    with tempfile.TemporaryDirectory(prefix="nightshift-judge-") as scratch:
        try:
            env = judge_env()
            env.setdefault("CLAUDE_CODE_MAX_RETRIES", str(cfg.max_retries))  # 429/529/5xx retried by the CLI
            proc = subprocess.run(argv, input=user, capture_output=True, text=True, cwd=scratch, env=env,
                                  timeout=cfg.timeout)
        except subprocess.TimeoutExpired:
            return None, f"no answer from the judge's CLI within {cfg.timeout:g}s", True
        except OSError as exc:
            return None, f"the judge's CLI could not start ({exc.strerror or exc})", False
    result = _result(proc.stdout)
    if result is None:
        said = _one_line(proc.stderr or proc.stdout) or f"exit {proc.returncode}"
        return None, f"the judge's CLI gave no result ({said})", True
    if result.get("is_error"):
        reason, transient = error_reason(result, budget)
        return result, reason, transient
    return result, None, False


def error_reason(result: dict, budget: float) -> tuple[str, bool]:
    """A one-line reason for the CLI's error result, and whether it may pass by itself (a busy API)."""
    text = _one_line(result.get("result") or result.get("subtype"))
    if BUSY.search(text):
        return f"the API is busy or the usage limit is reached for the judge's CLI ({text})", True
    if NOT_LOGGED_IN.search(text):
        return f"the judge's CLI is not logged in ({text}): {LOGIN_FIX}", False
    if "budget" in text.lower() or str(result.get("subtype", "")).startswith("error_max_budget"):
        return f"judge cost cap: the CLI stopped at --max-budget-usd {budget:.4f} ({text})", False
    return f"the judge's CLI failed: {text}", True


def _result(stdout: str) -> dict | None:
    """The CLI's final ``{"type":"result",...}`` object (the whole output in json mode, or its last line)."""
    for chunk in (stdout, *reversed(stdout.strip().splitlines())):
        try:
            value = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") == "result":
            return value
    return None


def _one_line(value: object) -> str:
    text = str(value or "").strip().splitlines()
    return (text[0] if text else "")[:200]
