"""Whether `nightshift init` turns the judge on: at claims of done, when a judge can be reached from here (an
Anthropic key for the API, or a Claude login or token with the `claude` CLI on PATH, as subscription users have).

The judge is the check for what the oracle and the tests cannot see (a "calibrated" constant that hides a bug,
a loosened tolerance in the solver, an edited test), so a run that could have one gets one. The choice and its
reason are written into nightshift.toml as a comment and said in init's summary; names only, never a value.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass

from supervisor.agents.credentials import find_credentials

OFF_WHY = ("no Anthropic key and no Claude login found here: only the oracle and the tests check the work; a "
           "constant tuned to the references or a test rewritten to pass is seen only by a judge")


@dataclass(frozen=True)
class JudgeChoice:
    on: bool
    via: str   # "api" | "agent" | "" when off
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
        if self.on:
            return f"judge: on at claims of done ({self.why})"
        return f"judge: off ({self.why})"


def choose_judge(claude_bin: str = "claude") -> JudgeChoice:
    found = find_credentials()
    if found.api:
        return JudgeChoice(True, "api", f"the API, with {', '.join(n for n in found.variables)} set")
    if found and shutil.which(claude_bin):
        how = f"{', '.join(found.variables)} set" if found.variables else f"the Claude login in {found.login}"
        return JudgeChoice(True, "agent", f"the claude CLI, with {how}")
    return JudgeChoice(False, "", OFF_WHY)
