"""Preflight lines about the workspace itself: the config, CLAUDE.md's Definition of done, the test command,
and (for Slurm runs) whether the cluster accepts the job's resources."""
from __future__ import annotations

from typing import Iterable

from supervisor.cli.preflight.lines import FAIL, NOTE, OK, SKIP, Line, PreflightContext
from supervisor.verify import definition_of_done as dod


def config_lines(ctx: PreflightContext) -> Iterable[Line]:
    from supervisor.errors import is_user_error
    from supervisor.shift.launcher import resolve_config

    try:
        ctx.config = resolve_config(ctx.workspace, backend=ctx.backend, agent=ctx.agent)
    except Exception as exc:  # noqa: BLE001 - a user's error is the line; a bug surfaces
        if not is_user_error(exc):
            raise
        yield Line(FAIL, "config", str(exc))
        return
    cfg = ctx.config
    yield Line(OK, "config", f"nightshift.toml is valid ({cfg.agent.kind} agent, {cfg.backend.kind} backend, "
                             f"{len(cfg.oracle.compare) if cfg.oracle else 0} comparison(s))")


def plan_lines(ctx: PreflightContext) -> Iterable[Line]:
    path = ctx.workspace / "CLAUDE.md"
    if not path.is_file():
        yield Line(FAIL, "plan", f"{path} is missing: `nightshift init` writes it (the plan and the Definition of "
                                 "done the agent works to)")
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    body = dod.body_lines(text)
    if dod.span(text) is None:
        yield Line(FAIL, "plan", "CLAUDE.md has no '## Definition of done' section: add one listing what must hold "
                                 "(the agent's claim is checked against it)")
    elif not body:
        yield Line(FAIL, "plan", "CLAUDE.md's Definition of done is empty: list what must hold when the goal is met")
    else:
        yield Line(OK, "plan", f"CLAUDE.md's Definition of done has {len(body)} line(s)")


def test_lines(ctx: PreflightContext) -> Iterable[Line]:
    from supervisor.sandbox.boundary import boundary_for
    from supervisor.verify.checks import run_tests

    cfg = ctx.config.verify
    if not cfg.test_command.strip():
        yield Line(NOTE, "tests", "no test command ([verify] test_command): the test ratchet has nothing to keep")
        return
    # In the namespace a run gives it (the test command runs the agent's code): what passes here passes there.
    ran = run_tests(cfg.test_command, ctx.workspace, cfg.timeout, ctx.out_dir, cfg.junit,
                    boundary_for(ctx.workspace, ctx.config))
    status, output, results = ran.status, ran.output, ran.results
    tail = " | ".join([l for l in output.strip().splitlines() if l.strip()][-2:])
    if status is None:
        yield Line(FAIL, "tests", f"`{cfg.test_command}` did not finish within [verify] timeout ({cfg.timeout:g} s) "
                                  "and was stopped: raise the timeout or make the tests faster")
        return
    if status in (126, 127):
        yield Line(FAIL, "tests", f"`{cfg.test_command}` cannot run ({tail or f'exit status {status}'}): install the "
                                  "runner or fix [verify] test_command")
        return
    if results:
        passed = sum(r["outcome"] == "passed" for r in results.values())
        failing = sum(r["outcome"] in ("failed", "error") for r in results.values())
        yield Line(OK, "tests", f"{passed} pass now (the ratchet's starting set), {failing} failing; per-test "
                                "results readable (JUnit)")
    elif status == 0:
        yield Line(OK, "tests", f"`{cfg.test_command}` passes now; per-test results not readable (only the exit "
                                "status counts; pytest gives per-test results)")
    else:
        yield Line(NOTE, "tests", f"`{cfg.test_command}` exits {status} now ({tail[:160]}); per-test results not "
                                  "readable, so no ratchet until it passes")


def slurm_lines(ctx: PreflightContext) -> Iterable[Line]:
    # Only where shifts run as batch jobs; `nightshift submit` asks sbatch itself at once, with its own words.
    if ctx.config.backend.kind != "slurm":
        return
    from hpc.preflight import slurm_preflight  # the face may reach hpc/; the core never does

    for status, text in slurm_preflight(ctx.config.slurm, ctx.workspace, ctx.out_dir, job=ctx.job):
        yield Line({"ok": OK, "note": NOTE, "fail": FAIL, "skip": SKIP}[status], "slurm", text)
