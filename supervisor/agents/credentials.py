"""Whether Claude Code has credentials here: an API key or token in the environment, or the login `claude` keeps
in its config folder. Names only: a value is never read into anything nightshift prints or records.

`nightshift doctor` and the preflight (`nightshift check`) both ask this, so they never disagree; ``judge_reach``
says whether a judge can be reached one way or another (`init` and `check` ask it).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
API_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")  # what the Anthropic SDK (the judge via "api") takes
MISSING = ("no ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / CLAUDE_CODE_OAUTH_TOKEN in the environment and no Claude "
           "login: export one, or run `claude` once and log in")


@dataclass(frozen=True)
class Credentials:
    variables: tuple[str, ...]  # the names of the credential variables that are set
    login: Path | None          # the config folder holding a `claude` login, if there is one

    def __bool__(self) -> bool:
        return bool(self.variables or self.login)

    @property
    def api(self) -> bool:
        return any(name in self.variables for name in API_VARS)

    def describe(self) -> str:
        if self.variables:
            return f"{', '.join(self.variables)} set (value not shown)"
        if self.login:
            return f"a Claude login is present in {self.login}"
        return MISSING


def find_credentials(env: Mapping[str, str] = os.environ) -> Credentials:
    config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    login = config_dir if (config_dir / ".credentials.json").exists() else None
    return Credentials(tuple(name for name in CREDENTIAL_VARS if env.get(name)), login)


def judge_reach(via: str, cli: str, env: Mapping[str, str] = os.environ) -> tuple[str | None, str, str]:
    """(why a judge cannot be reached ``via`` "api" | "agent" | "auto" here, or None; the way it is reached; what it
    is reached with). "auto" is the API when a key is set, else the CLI (verify/judge/call.resolve_via). Names only."""
    import shutil

    found = find_credentials(env)
    if via == "api" or (via == "auto" and found.api):
        if not found.api:
            return "[judge] via = \"api\" but no ANTHROPIC_API_KEY is set: export it, or set via = \"agent\"", "", ""
        return None, "the API", f"{', '.join(n for n in found.variables if n in API_VARS)} set"
    if not shutil.which(cli):
        return f"the judge's {cli} CLI is not on PATH: install Claude Code, or export ANTHROPIC_API_KEY", "", ""
    if not found:
        return (f"the judge's {cli} CLI has no login here: run `{cli}` once and log in, or export "
                "ANTHROPIC_API_KEY", "", "")
    with_what = f"{', '.join(found.variables)} set" if found.variables else f"the Claude login in {found.login}"
    return None, f"the {cli} CLI", with_what
