"""The preflight's lines about the boundary, probed for the agent that will run: a script runs inside the real
namespace of that agent's turn (its own state folders writable, as a turn has them) and tries the doors (read a
held-out reference, write a reference and nightshift.toml, leave a file outside the workspace); and the oracle
command's probe, run exactly as the oracle command is (every reference absent). Where no namespace can be made,
the lines say which doors are open for this agent, and a run with held-out comparisons fails closed."""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Iterable

from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, WARN, Line, PreflightContext


def boundary_lines(ctx: PreflightContext) -> Iterable[Line]:
    from nightshift.supervisor.cli.doctor import boundary_checks
    from nightshift.supervisor.sandbox.boundary import boundary_for, notes, open_doors, start_problems

    for ok, what, detail in boundary_checks(ctx.workspace):
        if what in ("root", "permission mode", "nightshift.toml"):
            yield Line(FAIL if not ok else OK, "boundary", detail)
        elif what == "tool-call hook":  # which hook the run's turns will use, and why not HTTP where it is not
            yield Line(OK if detail.startswith("Claude Code's tool calls are decided over") else NOTE, "boundary",
                       detail)
    boundary = boundary_for(ctx.workspace, ctx.config)
    problems = start_problems(boundary)
    for problem in problems:
        yield Line(FAIL, "boundary", problem)
    tier = boundary.tier
    if tier.name != "full" and not problems:  # weaker than full: a warning with the cause's fix, never an ok
        yield Line(WARN, "boundary", f"{tier.label()}: {tier.why}")
    for note in notes(boundary) + open_doors(boundary, ctx.agent or ctx.config.agent.kind):
        yield Line(NOTE, "boundary", note)
    if boundary.problem is not None and tier.hides_files:  # Landlock without a namespace: probed as a namespace is
        yield from _agent_probe(ctx, boundary)
        yield from _surfaces(boundary, nested=False)
    if boundary.problem is None:  # without a namespace, open_doors' notes above said it (and every surface is open)
        yield from _agent_probe(ctx, boundary)
        kind = ctx.agent or ctx.config.agent.kind
        yield from _surfaces(boundary, nested=ctx.config.policy.claude_sandbox and kind == "claude")
    yield from _references_out_of_reach(ctx, boundary)


def _surfaces(boundary, nested: bool) -> Iterable[Line]:
    """The sandbox's surfaces, probed inside the namespace the run's commands and turns get: a line each, OK or
    NOTE (whether a run may start without a part is start_problems' decision alone, said above as a FAIL)."""
    from nightshift.supervisor.sandbox.survey import survey_lines

    for line in survey_lines(boundary, nested=nested):
        yield Line(OK if line.startswith("closed") else NOTE, "sandbox", line)


def _agent_probe(ctx: PreflightContext, boundary) -> Iterable[Line]:
    """Try the doors from inside the namespace the configured agent's turns get."""
    from nightshift.supervisor.agents import make_agent
    from nightshift.supervisor.run.paths import RunPaths
    from nightshift.supervisor.sandbox.turn import turn_namespace

    kind = ctx.agent or ctx.config.agent.kind
    agent = make_agent(kind, ctx.config.agent.mode, ctx.config.agent.command or "")
    state = [p for p in agent.state_paths() if p.exists()]
    ns = turn_namespace(boundary, RunPaths(ctx.out_dir / "probe-run"), 1, "s1t1", state)
    outside = Path.home() / f".nightshift-probe-{ctx.out_dir.name}"
    tries = [("read", str(p)) for p in boundary.heldout] + [("write", str(p)) for p in boundary.references[:1]]
    tries += [("write", str(ctx.workspace / "nightshift.toml")), ("create", str(outside))]
    # a write is an open for writing (`touch` of an existing file falls back to setting its times, which Landlock
    # does not hold and which writes nothing)
    verb = {"read": "cat {} >/dev/null", "write": ": >> {}", "create": "touch {}"}
    script = "".join(f"{verb[how].format(shlex.quote(path))} 2>/dev/null && echo {how} {shlex.quote(path)}\n"
                     for how, path in tries) + "true\n"
    probe = subprocess.run(ns.argv + ["bash", "-c", script], cwd=ctx.workspace, capture_output=True, text=True,
                           timeout=60)
    if outside.exists():
        outside.unlink()
    opened = [line for line in probe.stdout.splitlines() if line.strip()]
    if probe.returncode != 0:
        yield Line(FAIL, "boundary", f"the {kind} agent's namespace could not start: "
                                     f"{(probe.stderr.strip().splitlines() or ['no message'])[-1]}; if the workspace "
                                     "is on a filesystem bubblewrap cannot bind, move it, or set [policy] sandbox = "
                                     "\"off\" (and say heldout = \"unprotected\" if you hold data out)")
    elif opened:
        yield Line(FAIL, "boundary", f"inside the {kind} agent's namespace these doors are open: {'; '.join(opened)}")
    else:
        held = "cannot read held-out references, " if boundary.heldout else ""
        if boundary.problem is not None:
            yield Line(OK, "boundary", f"every process of the {kind} agent runs under {boundary.tier.label()} "
                                       f"(probed): it {held}cannot write references or nightshift.toml, writes only "
                                       "in the workspace and a private TMPDIR")
            return
        yield Line(OK, "boundary", f"every process of the {kind} agent runs in nightshift's namespace (probed): it "
                                   f"{held}cannot write references or nightshift.toml, writes only in the workspace "
                                   "and a private TMPDIR, and nothing it starts outlives its turn"
                                   + ("; no network but the model's API" if not boundary.network else ""))


def _references_out_of_reach(ctx: PreflightContext, boundary) -> Iterable[Line]:
    from nightshift.supervisor.verify.oracle.check import _sealed_command
    from nightshift.supervisor.verify.oracle.integrity import resolve
    from nightshift.supervisor.verify.oracle.readers import split_part

    oracle = ctx.config.oracle
    if oracle is None or not oracle.compare:
        return
    refs = [resolve(ctx.workspace, split_part(c.reference)[0]).resolve() for c in oracle.compare]
    probe = " ; ".join(f"test -e {shlex.quote(str(p))} && echo {shlex.quote(str(p))}" for p in refs) + " ; true"
    out_dir = ctx.out_dir / "seal-probe"
    out_dir.mkdir(parents=True, exist_ok=True)
    result, seal = _sealed_command(oracle, probe, ctx.workspace, out_dir, None, boundary)
    seen = [line for line in Path(result["stdout"]).read_text().splitlines() if line.strip()] \
        if result.get("stdout") else []
    if not seen:
        yield Line(OK, "references", "the oracle command cannot see any reference while it runs (probed)")
        return
    text = (f"the oracle command could read {len(seen)} reference(s) here ({Path(seen[0]).name}, ...): without "
            "a namespace a run moves the visible references out of the workspace while it runs")
    if not seal.heldout_protected:
        text += ", but held-out references stay readable to a solver run by the same user (bubblewrap, or a store " \
                "readable only by another account, would protect them)"
    yield Line(NOTE, "references", text)
