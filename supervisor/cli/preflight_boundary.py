"""The preflight's lines about the boundary: what holds the agent's hands on this machine (the sandbox, the
hook, the integrity check; root's one trap) and whether the oracle command really cannot read the references
while it runs (a probe run exactly as the oracle command is, inside the same seal)."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Iterable

from supervisor.cli.preflight_lines import FAIL, NOTE, OK, Line, PreflightContext


def boundary_lines(ctx: PreflightContext) -> Iterable[Line]:
    from supervisor.cli.doctor import boundary_checks
    from supervisor.shift.policy import sandbox_problem

    for ok, what, detail in boundary_checks(ctx.workspace):
        if what in ("sandbox (agent's shell)", "root", "permission mode", "nightshift.toml"):
            # No sandbox is a note (the hook and the integrity check still hold the rules), unless it is required.
            weaker = what == "sandbox (agent's shell)" and sandbox_problem() is not None
            yield Line(FAIL if not ok else NOTE if weaker else OK, "boundary", detail)
    yield from _references_out_of_reach(ctx)


def _references_out_of_reach(ctx: PreflightContext) -> Iterable[Line]:
    from supervisor.verify.oracle.check import _sealed_command
    from supervisor.verify.oracle.integrity import resolve
    from supervisor.verify.oracle.readers import split_part

    oracle = ctx.config.oracle
    if oracle is None or not oracle.compare:
        return
    refs = [resolve(ctx.workspace, split_part(c.reference)[0]).resolve() for c in oracle.compare]
    probe = " ; ".join(f"test -e {shlex.quote(str(p))} && echo {shlex.quote(str(p))}" for p in refs) + " ; true"
    out_dir = ctx.out_dir / "seal-probe"
    out_dir.mkdir(parents=True, exist_ok=True)
    result, notes = _sealed_command(oracle, probe, ctx.workspace, out_dir, None, list(oracle.compare),
                                    ctx.config.policy.sandbox)
    seen = [line for line in Path(result["stdout"]).read_text().splitlines() if line.strip()] \
        if result.get("stdout") else []
    if not seen:
        yield Line(OK, "references", "the oracle command cannot see any reference while it runs (probed)")
        return
    moved = [n for n in notes if "stayed readable" in n or "NOT hidden" in n]
    text = (f"the oracle command could read {len(seen)} reference(s) here ({Path(seen[0]).name}, ...): without "
            "bubblewrap a run moves the visible references out of the workspace while it runs")
    if any(c.heldout for c in oracle.compare):
        text += ", but held-out references stay readable to a solver run by the same user (bubblewrap, or a store " \
                "readable only by another account, would protect them)"
    yield Line(NOTE, "references", text + (f" ({moved[0]})" if moved else ""))
