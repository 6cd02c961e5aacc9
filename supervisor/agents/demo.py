"""The demo agent: an offline, scripted stand-in for a coding agent, used by `nightshift demo` and tests.

It is not a model. Each turn it runs ``nightshift.supervisor.agents.demo_script``, which acts on the demo workspace the
way a hasty agent would: first a forward-Euler solver and a premature claim of done, then, pushed back with
the measured error, an RK4 solver, notes on the failed approach, the plan checked, and a second claim.
"""
from __future__ import annotations

import shlex
import sys

from nightshift.supervisor.agents.base import Agent, TurnContext


class DemoAgent(Agent):
    kind = "demo"

    def command(self, ctx: TurnContext) -> str:
        return (f"{shlex.quote(sys.executable)} -m nightshift.supervisor.agents.demo_script "
                f"--prompt-file {shlex.quote(str(ctx.prompt_file))}")
