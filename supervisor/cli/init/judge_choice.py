"""Whether `nightshift init` turns the judge on: at claims of done, when a judge can be reached from here (an
Anthropic key for the API, or a Claude login or token with the `claude` CLI on PATH, as subscription users have:
agents/credentials.judge_reach, the rule `check` applies too).

The judge is the check for what the oracle and the tests cannot see (a "calibrated" constant that hides a bug,
a loosened tolerance in the solver, an edited test), so a run that could have one gets one. The choice and its
reason are written into nightshift.toml as a comment and said in init's summary; names only, never a value.
"""
from __future__ import annotations

from dataclasses import dataclass

from nightshift.supervisor.agents.credentials import find_credentials, judge_reach
from nightshift.supervisor.config.judge import NO_JUDGE

OFF_WHY = f"no Anthropic key and no Claude login found here: {NO_JUDGE}"


@dataclass(frozen=True)
class JudgeChoice:
    on: bool
    why: str   # the words for the summary
    short: str = "no Anthropic key or Claude login here"  # the words for nightshift.toml's comment, when off

    def block(self) -> str:
        """The [judge] section of nightshift.toml as init writes it."""
        if self.on:
            return (f"\n[judge]                     # on ({self.why}): an independent model reads the diff at each "
                    "claim of done;\n"
                    "when = \"claim\"             # it can only add failures; `enabled = false` turns it off\n"
                    "via = \"auto\"               # the API when ANTHROPIC_API_KEY is set, else the claude CLI's "
                    "login\n")
        return (f"\n# [judge]                   # off: {self.short}; with one, uncomment these two lines\n"
                "# when = \"claim\"\n")

    def summary(self) -> str:
        return f"judge: {'on at claims of done' if self.on else 'off'} ({self.why})"


def choose_judge() -> JudgeChoice:
    problem, way, with_what = judge_reach("auto", "claude")
    if problem is None:
        return JudgeChoice(True, f"{way}, with {with_what}")
    return JudgeChoice(False, f"{problem}; {NO_JUDGE}" if find_credentials() else OFF_WHY)
