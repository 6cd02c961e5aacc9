"""Preflight lines about the oracle: references unchanged since init, the oracle command run once with its
timeout and today's gap comparison by comparison (the run's starting point), and the calibration gate.

What the agent will fix is a note (a candidate the solver does not write yet, a gap); what no agent can fix is a
problem: a command that is not found or hangs, a candidate the command does not write although it succeeds, a
reference that cannot be read, a comparison that cannot fail.
"""
from __future__ import annotations

import shlex
from typing import Iterable

from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, Line, PreflightContext
from nightshift.supervisor.sandbox.command import command_reach
from nightshift.supervisor.sandbox.failure_words import environment_failure
from nightshift.supervisor.verify.oracle.report import nonfinite_words, worst_words


def _comparisons(ctx: PreflightContext):
    oracle = ctx.config.oracle
    return list(oracle.compare) if oracle is not None else []


def reference_lines(ctx: PreflightContext) -> Iterable[Line]:
    if not _comparisons(ctx):
        yield Line(NOTE, "oracle", "no [oracle] comparisons: nothing measures the goal; `nightshift init "
                                   "--reference-dir DIR` writes them from the reference outputs")
        return
    from nightshift.supervisor.cli.init.workspace import reference_files
    from nightshift.supervisor.run.paths import workspace_state_dir
    from nightshift.supervisor.verify.oracle.fingerprint import changed_since_init

    files = reference_files(ctx.config.oracle, ctx.workspace)
    missing = [rel for rel, path in files.items() if not path.is_file()]
    for rel in missing:
        yield Line(FAIL, "references", f"{rel} does not exist: fix reference = in nightshift.toml or restore it")
    changed = changed_since_init({r: p for r, p in files.items() if r not in missing},
                                 workspace_state_dir(ctx.workspace) / "references")
    for rel, what in changed:
        yield Line(FAIL, "references", f"{rel} was {what} after `nightshift init`: the run will put back the init-time "
                                       f"version; restore it (git checkout -- {shlex.quote(rel)}) or, if the new file "
                                       "is right, `rm -r .nightshift/references` so the run hashes it afresh")
    if not missing and not changed:
        yield Line(OK, "references", f"{len(files)} reference file(s) present, unchanged since init")


def _command_line(ctx: PreflightContext, result: dict | None, timeout: float, boundary) -> tuple[Line | None, bool]:
    """(the line about the oracle command, whether it ran and succeeded)."""
    command = ctx.config.oracle.command
    if not command.strip():
        return Line(FAIL, "oracle", "[oracle] command is empty: set the command that writes the candidates "
                                    "(e.g. \"python -m solver --out out/\")"), False
    if result is None:
        return None, False
    tail = " | ".join(result.get("stderr_tail") or [])
    if result.get("error"):
        return Line(FAIL, "oracle", f"`{command}` could not start: {result['error']}"), False
    if result["timed_out"]:
        return Line(FAIL, "oracle", f"`{command}` did not finish within its timeout ({timeout:g} s) and was stopped "
                                    f"(output: {result['stdout']}); make it faster or raise [oracle] timeout"), False
    failure = environment_failure(result, *command_reach(boundary)) if result["status"] != 0 else None
    if failure is not None:  # no change to the solver fixes it: said in the command's own words, with the fix
        return Line(FAIL, "oracle", f"`{command}` exits {result['status']} where it runs, whatever the solver does: "
                                    f"{failure.words()}"), False
    if result["status"] in (126, 127):
        return Line(FAIL, "oracle", f"`{command}` cannot run ({tail or 'command not found'}): fix [oracle] "
                                    "command"), False
    if result["status"] != 0:
        return Line(NOTE, "oracle", f"`{command}` exits {result['status']} today ({tail[:200]}): expected while the "
                                    "solver is not written; it must exit 0 once it is"), False
    return Line(OK, "oracle", f"`{command}` ran in {result['seconds']:.1f} s and exited 0"), True


def oracle_lines(ctx: PreflightContext) -> Iterable[Line]:
    if not _comparisons(ctx):
        return
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.verify import verdict_tree
    from nightshift.supervisor.verify.oracle import run_oracle
    from nightshift.supervisor.verify.oracle.exam import Exam

    oracle = ctx.config.oracle
    # the boundary the run's verdict gives the command ([policy] command_network, sockets, ...): one place
    boundary = boundary_for(ctx.workspace, ctx.config)
    try:  # where every verdict runs it (verify/verdict_tree.py), so check says what the verdicts will
        tree, boundary = verdict_tree.prepare(ctx.workspace, ctx.workspace, boundary)
    except (verdict_tree.TreeProblem, OSError) as exc:
        tree = None
        yield Line(FAIL, "oracle", f"the verdicts' clean checkout of the candidate cannot be made ({exc}): the "
                                   "workspace must be a git repository git can read")
    # The baseline becomes the run's first event and report, both readable to the agent: held-out kept out (Exam)
    outcome = run_oracle(oracle, ctx.workspace, ctx.out_dir / "oracle", store=None, full=True, exam=Exam(),
                         boundary=boundary if tree else None, tree=tree.path if tree else None)
    line, command_ok = _command_line(ctx, outcome.report.get("command"), oracle.timeout, boundary)
    if line:
        yield line
    if tree is not None and (outcome.report.get("command") or {}).get("status") not in (0, None):
        yield Line(NOTE, "oracle", verdict_tree.CLEAN_CHECKOUT)
    ctx.baseline = {"metric": outcome.metric, "metrics": outcome.metrics, "summary": outcome.summary,
                    "report": str(ctx.out_dir / "oracle" / "oracle.json")}
    for entry in outcome.report["comparisons"]:
        yield _gap_line(entry, command_ok, oracle.command)
    if not any(c.heldout for c in oracle.compare):
        from nightshift.supervisor.cli.watch.heldout import NOTHING_HELD
        yield Line(NOTE, "held-out", NOTHING_HELD)


def _gap_line(entry: dict, command_ok: bool, command: str) -> Line:
    name, error = entry["name"], entry.get("error")
    if "result" in entry:
        return Line(NOTE, "gap today", f"held-out {name}: not measured before the run (the agent learns only pass "
                                       "or a coarse band, at a claim of done; `nightshift compare` shows you all)")
    if error:
        side = entry.get("error_side")
        if side == "reference":
            return Line(FAIL, "oracle", f"{name}: the reference cannot be compared: {error}")
        if entry.get("error_kind") == "missing file" and command_ok:
            return Line(FAIL, "oracle", f"{name}: {entry['candidate']} is not written by `{command}` although it "
                                        "exits 0: fix candidate = (or --candidate-dir at init) or the command")
        return Line(NOTE, "gap today", f"{name}: {error}")
    if entry["passed"]:
        return Line(NOTE, "gap today", f"{name}: already within tolerance (worst {entry['ratio']:.3g} x tol); is "
                                       "this part of the goal already met?")
    worst = max(entry.get("columns") or [{}], key=lambda c: c.get("ratio", 0))
    # the point furthest outside its tolerance (atol included), not the largest relative error: that one sits
    # where the reference is near zero by symmetry, which is rarely where the physics is wrong
    said = (nonfinite_words(entry, worst) or worst_words(entry, worst)) if worst.get("x_worst") is not None else ""
    said += f"; {worst['storage']}" if said and worst.get("storage") else ""  # float32 against rtol 1e-10
    return Line(NOTE, "gap today", f"{name}: {entry['ratio']:.3g} x the tolerance (worst {worst.get('column')}"
                                   + (f": {said})" if said else ")"))


def calibration_lines(ctx: PreflightContext) -> Iterable[Line]:
    if not _comparisons(ctx):
        return
    from nightshift.supervisor.verify.oracle.calibrate import calibrate
    from nightshift.supervisor.verify.oracle.calibrate_field import calibrate_field
    from nightshift.supervisor.verify.oracle.integrity import resolve
    from nightshift.supervisor.verify.oracle.readers import read_table, split_part
    from nightshift.supervisor.verify.oracle.table import OracleInputError

    good = []
    for comp in _comparisons(ctx):
        path, part = split_part(comp.reference)
        try:
            found = calibrate_field(comp, resolve(ctx.workspace, path), part) \
                if not comp.columns and comp.x is None else None
            if found is None:
                found = calibrate(comp, read_table(resolve(ctx.workspace, path), part))
        except OracleInputError as exc:
            yield Line(FAIL, "calibration", f"{comp.name}: the reference cannot be read: {exc}")
            continue
        if found.ok:
            good.append(comp.name)
        for status, said in [(FAIL, problem) for problem in found.problems] + [(NOTE, n) for n in found.notes]:
            if comp.heldout and "atol dominates there" in said:  # decades and x of a held-out answer: screen only
                yield Line(status, "calibration", f"held-out {comp.name}: a region where atol dominates (on this "
                           "screen only):", check_only=" " + said)
            else:
                yield Line(status, "calibration", said)
    if good:
        yield Line(OK, "calibration", f"{', '.join(good)}: the reference passes against itself; 10x the tolerance "
                                      "at one point fails there; a constant candidate fails; 3x rtol fails in every "
                                      "decade of |reference| that no atol dominates")
