"""The preflight's judge line: whether an independent judge will grade claims of done in this run, and how it
will be reached, or plainly that none will run and what only a judge would have seen. Names only, never a value.
"""
from __future__ import annotations

import os
import shutil
from typing import Iterable

from supervisor.agents.credentials import find_credentials
from supervisor.cli.preflight.lines import FAIL, NOTE, OK, Line, PreflightContext

NONE_WILL_RUN = ("no judge will run: only the oracle and the tests check the work, so a constant tuned to the "
                 "references or a test rewritten to pass goes unseen; add [judge] when = \"claim\" (an Anthropic "
                 "key or a Claude login is needed)")


def judge_lines(ctx: PreflightContext) -> Iterable[Line]:
    judge = ctx.config.judge
    if judge is None or not judge.enabled:
        why = "[judge] enabled = false" if judge is not None else "no [judge] in nightshift.toml"
        yield Line(NOTE, "judge", f"{why}: {NONE_WILL_RUN}")
        return
    from supervisor.verify.judge.call import resolve_via

    when = "at each claim of done" if judge.when == "claim" else f"every {judge.every_shifts} shift(s)"
    via = resolve_via(judge)
    if via == "api":
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            yield Line(FAIL, "judge", "[judge] via = \"api\" but no ANTHROPIC_API_KEY is set: export it, or set "
                                      "via = \"agent\" for the claude CLI's login")
            return
        yield Line(OK, "judge", f"{judge.model} through the API, {when}")
        return
    if not shutil.which(judge.cli):
        yield Line(FAIL, "judge", f"[judge] runs through the {judge.cli} CLI, which is not on PATH: install Claude "
                                  "Code, export ANTHROPIC_API_KEY, or set [judge] enabled = false")
        return
    found = find_credentials()
    if not found:
        yield Line(FAIL, "judge", f"[judge] runs through the {judge.cli} CLI, which has no login here: run "
                                  f"`{judge.cli}` once and log in, export ANTHROPIC_API_KEY, or set [judge] "
                                  "enabled = false")
        return
    yield Line(OK, "judge", f"{judge.model} through the {judge.cli} CLI ({found.describe()}), {when}")
