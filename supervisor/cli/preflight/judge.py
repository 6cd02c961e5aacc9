"""The preflight's judge line: whether an independent judge will grade claims of done in this run, and how it
will be reached (agents/credentials.judge_reach, the rule `init` applies too), or plainly that none will run and
what only a judge would have seen. Names only, never a value.
"""
from __future__ import annotations

from typing import Iterable

from nightshift.supervisor.agents.credentials import judge_reach
from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, Line, PreflightContext
from nightshift.supervisor.config.judge import NO_JUDGE

NONE_WILL_RUN = (f"no judge will run: {NO_JUDGE}; add [judge] when = \"claim\" (an Anthropic key or a Claude login "
                 "is needed)")


def judge_lines(ctx: PreflightContext) -> Iterable[Line]:
    judge = ctx.config.judge
    if judge is None or not judge.enabled:
        why = "[judge] enabled = false" if judge is not None else "no [judge] in nightshift.toml"
        yield Line(NOTE, "judge", f"{why}: {NONE_WILL_RUN}")
        return
    problem, way, with_what = judge_reach(judge.via, judge.cli)
    if problem is not None:
        yield Line(FAIL, "judge", f"{problem} (or set [judge] enabled = false)")
        return
    when = "at each claim of done" if judge.when == "claim" else f"every {judge.every_shifts} shift(s)"
    yield Line(OK, "judge", f"{judge.model} through {way}, {when} (with {with_what})")
