"""Preflight lines about the workspace itself: the config, CLAUDE.md's Definition of done, the test command,
and (for Slurm runs) whether the cluster accepts the job's resources."""
from __future__ import annotations

from typing import Iterable

from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, SKIP, Line, PreflightContext
from nightshift.supervisor.verify import definition_of_done as dod


def config_lines(ctx: PreflightContext) -> Iterable[Line]:
    from nightshift.supervisor.errors import is_user_error
    from nightshift.supervisor.shift.launcher import resolve_config

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
    from nightshift.supervisor.config.oracle import deprecation_notes

    for note in deprecation_notes(cfg.oracle):
        yield Line(NOTE, "config", note)


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
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.verify.baseline import take_baseline

    cfg = ctx.config.verify
    if not cfg.test_command.strip():
        yield Line(NOTE, "tests", "no test command ([verify] test_command): the test ratchet has nothing to keep")
        if cfg.heldout_tests:  # held-out tests without a command to run them: its FAIL line
            yield heldout_tests_line(ctx)
        return
    # In the namespace a run gives it (the test command runs the agent's code): what passes here passes there.
    # Twice when quick: the run's starting set leaves out a test whose outcome differs (verify/baseline.py).
    from nightshift.supervisor.verify import verdict_tree

    try:  # where every verdict runs it: a command that needs what no commit holds fails here, not at every stop
        tree, boundary = verdict_tree.prepare(ctx.workspace, ctx.workspace, boundary_for(ctx.workspace, ctx.config))
    except (verdict_tree.TreeProblem, OSError) as exc:
        yield Line(FAIL, "tests", f"the verdicts' clean checkout of the candidate cannot be made ({exc}): the "
                                  "workspace must be a git repository git can read")
        return
    base = take_baseline(cfg.test_command, tree.path, cfg.timeout, ctx.out_dir, cfg.junit, "preflight", boundary)
    ctx.scratch["tests_baseline"] = base  # the run's ``tests.baseline`` event (cli/check.py record_preflight)
    log = ctx.out_dir / "baseline-1" / "tests.log"
    output = log.read_text(errors="replace") if log.is_file() else ""
    tail = " | ".join([l for l in output.strip().splitlines() if l.strip()][-2:])
    status = base.get("exit_status")
    if base.get("timed_out"):
        yield Line(FAIL, "tests", f"`{cfg.test_command}` did not finish within [verify] timeout ({cfg.timeout:g} s) "
                                  "and was stopped: raise the timeout or make the tests faster")
    elif base.problem:
        yield Line(FAIL, "tests", base.problem)
    elif base.get("per_test") or status == 0 and base.get("plugin") is not False:
        yield Line(OK, "tests", base.describe())
    elif status == 0:  # it runs, but cannot be shown able to fail, or nightshift's plugin did not reach its pytest
        yield Line(NOTE, "tests", base.describe())
    else:
        yield Line(NOTE, "tests", f"{base.describe()} ({tail[:160]})")
    if status not in (0, None) or base.problem:
        yield Line(NOTE, "tests", verdict_tree.clean_checkout("the test command"))
    held = heldout_tests_line(ctx)
    if held is not None:
        yield held


def heldout_tests_line(ctx: PreflightContext) -> Line | None:
    """How many tests are held out (`init --holdout-tests`; their ids on `nightshift check`'s screen only: the run's
    log, which the agent reads, keeps the count), or what a run without them cannot catch."""
    from pathlib import Path

    from nightshift.supervisor.cli.init.holdout_tests import UNCAUGHT
    from nightshift.supervisor.verify.heldout_checkout import command_problem, held_ids

    store = ctx.config.verify.heldout_tests
    if not store:  # with references the oracle grades the claim; with tests only, say what goes unseen
        with_refs = ctx.config.oracle is not None and ctx.config.oracle.compare
        return None if with_refs else Line(NOTE, "held-out", UNCAUGHT)
    problem = command_problem(ctx.config.verify.test_command)
    if problem:
        return Line(FAIL, "held-out", problem)
    ids = held_ids(Path(store).expanduser() / "files")
    if not ids:
        return Line(FAIL, "held-out", f"[verify] heldout_tests = {store}: no held-out test is there (moved or "
                                            "deleted?); put them back, or remove the key from nightshift.toml")
    return Line(OK, "held-out", f"{len(ids)} held out, run over the candidate at a claim of done",
                check_only=": " + ", ".join(ids))


def slurm_lines(ctx: PreflightContext) -> Iterable[Line]:
    # Only where shifts run as batch jobs; `nightshift submit` asks sbatch itself at once, with its own words.
    if ctx.config.backend.kind != "slurm":
        return
    from nightshift.hpc.preflight import slurm_preflight  # the face may reach hpc/; the core never does

    for status, text in slurm_preflight(ctx.config.slurm, ctx.workspace, ctx.out_dir, job=ctx.job):
        yield Line({"ok": OK, "note": NOTE, "fail": FAIL, "skip": SKIP}[status], "slurm", text)
