"""The verification pipeline run at every stop: the boundary after the fact (protected files), reference
integrity and the oracle, the tests ratchet,
verification commands, the plan, the lab notes, and (optionally) the independent judge.

The verdict passes only when every check passes; the judge can only add failures. The agent's own word is
never enough: a claim of done is checked like any other stop.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from nightshift.supervisor import gitops
from nightshift.supervisor.verify.boundary import check_boundary, move_new_config, remember, test_files
from nightshift.supervisor.verify.git_controls import check_git_controls, store_of
from nightshift.supervisor.verify.checks import (Check, check_changelog, check_commands, check_conflicts, check_plan,
                                      check_tests, unreadable)
from nightshift.supervisor.verify.heldout_tests import check_heldout_tests, merge as merge_heldout
from nightshift.supervisor.verify.nested_repos import check_nested_repos
from nightshift.supervisor.verify.ratchet import Ratchet
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.sandbox.boundary import Boundary, boundary_for
from nightshift.supervisor.sandbox.tier import FULL, tier_for


@dataclass
class Verdict:
    passed: bool
    claimed: str | None
    summary: str
    checks: list[Check]
    metric: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    passed_tests: list[str] = field(default_factory=list)
    plan: dict[str, bool] = field(default_factory=dict)
    judge: dict[str, Any] | None = None
    judge_cost_usd: float = 0.0
    heldout: dict[str, Any] | None = None  # what this verdict released about held-out comparisons (oracle/exam.py)
    sandbox: str | None = None  # the boundary's tier the agent worked in (sandbox/tier.py): "full", "landlock"...

    def event_data(self, turn: int) -> dict[str, Any]:
        """What verify.finished and verdict.json hold: readable to the agent, so no held-out figure is here."""
        return {"turn": turn, "passed": self.passed, "claimed": self.claimed, "summary": self.summary,
                "checks": [c.to_dict() for c in self.checks], "metric": self.metric, "metrics": self.metrics,
                "judge": self.judge, "judge_cost_usd": self.judge_cost_usd, "heldout": self.heldout,
                "sandbox": self.sandbox}

    def findings(self) -> str:
        """The measured failures, as the push-back quotes them."""
        out = []
        for check in self.checks:
            if check.passed:
                out += [f"- {note}" for note in check.data.get("notes", [])]  # what the namespace ended
                continue
            out.append(f"- {check.summary}")
            out += [f"    {line}" for line in check.lines]
        return "\n".join(out) if out else "- every check passes"


@dataclass
class StopContext:
    run: RunPaths
    config: Config
    shift: int
    turn: int
    claim: dict[str, Any] | None
    shift_base: str | None  # HEAD when the shift started
    accepted_base: str | None  # HEAD at the last passing verdict (for the judge's diff)
    passed_before: set[str]
    plan_known: dict[str, bool]
    judge_spent_usd: float = 0.0
    state: dict[str, Any] | None = None  # the run's fold: the held-out exam's Ladder and bits released so far
    baseline: set[str] = field(default_factory=set)  # of passed_before, those that passed when the run began
    passed_total: int | None = None  # without per-test results: the most tests that passed (the start's count on)
    released: set[str] = field(default_factory=set)  # tests a person let go: passing again keeps their files free
    held: set[str] = field(default_factory=set)  # every test whose file is kept: each collected at the start too
    goal: set[str] = field(default_factory=set)  # the goal's tests: failing at the start, the user's all the same
    _boundary: Boundary | None = field(default=None, repr=False, compare=False)  # boundary(), made once a stop
    _tree: Any = field(default=None, repr=False, compare=False)  # in_tree(), made once a stop

    def kept_tests(self) -> set[str]:
        """The tests whose files and selecting configuration are the user's: the ratchet's and the goal's."""
        return set(self.passed_before) | set(self.held)

    def prerun(self) -> dict[str, str]:
        """The user's dirty and untracked paths when the run began (launcher.py writes it; gitops.commit_changes
        leaves them alone): {} where there is no record (a fleet's check)."""
        try:
            return json.loads(self.run.prerun.read_text())
        except (OSError, ValueError):
            return {}

    def run_base(self) -> str | None:
        """The commit the run began at (the agent's commits are the ones after it); the fleet's check has no fold
        and passes the lane's base as both bases."""
        return (self.state or {}).get("run_base") or self.accepted_base or self.shift_base

    def boundary(self) -> Boundary:
        """What the commands that run the agent's code may see: the run's namespace (supervisor/sandbox). Made once
        a stop (test_files reads the folder of every kept test, and the oracle, tests, commands and held-out tests
        each ask)."""
        if self._boundary is None:
            ws = self.run.workspace
            self._boundary = boundary_for(ws, self.config, self.run.root, sorted(test_files(ws, self.kept_tests())))
        return self._boundary

    def in_tree(self) -> tuple[Any, Boundary]:
        """The verdict's tree (verify/verdict_tree.py: the candidate's tracked files, no reference, no git history,
        nightshift's own build outputs of earlier verdicts) and the boundary of a command run there. Made once a
        stop, after the boundary's restores and moves (the tree is what the stop's commit holds). Raises
        verdict_tree.TreeProblem."""
        if self._tree is None:
            from nightshift.supervisor.verify.verdict_tree import prepare
            self._tree = prepare(self.run.workspace, self.run.root, self.boundary(),
                                 int(self.config.verify.max_commit_mb * (1 << 20)))
        return self._tree


NOT_BUILT = ("the committed tree does not build or run: the oracle command failed in a clean checkout of the stop's "
             "commit (tracked files only: no ignored build output, cache or environment of the workspace; the command "
             "builds what it needs)")


def _oracle_check(ctx: StopContext, full: bool) -> tuple[Check, Any]:
    from nightshift.supervisor.verify.oracle import run_oracle
    from nightshift.supervisor.verify.oracle.exam import Exam, private_folder

    out_dir = ctx.run.turn_file(ctx.shift, ctx.turn, "oracle")
    out_dir.mkdir(parents=True, exist_ok=True)
    claimed = bool(ctx.claim and ctx.claim.get("status") == "done")
    exam = Exam.from_state(ctx.state, claimed, ctx.config.oracle.heldout_budget, private_folder(ctx.run.root))
    tree, inside = ctx.in_tree()
    outcome = run_oracle(ctx.config.oracle, ctx.run.workspace, out_dir, ctx.run.references, full=full,
                         boundary=inside, exam=exam, base=ctx.run_base(), tree=tree.path)
    lines = list(outcome.tampered) + list(outcome.pushback)
    if (outcome.report.get("command") or {}).get("status") not in (0, None):
        lines.insert(0, NOT_BUILT)
    lines += [f"note: {n}" for n in tree.notes]
    return Check("oracle", outcome.passed, outcome.summary, lines,
                 {"metric": outcome.metric, "metrics": outcome.metrics, "report": outcome.report}), outcome


def _judge_check(ctx: StopContext, checks: list[Check], report: dict | None) -> tuple[Check | None, dict, float]:
    cfg = ctx.config.judge
    claimed_done = bool(ctx.claim and ctx.claim.get("status") == "done")
    if cfg is None or not cfg.enabled:
        return None, {}, 0.0
    if cfg.when == "claim" and not claimed_done:
        return None, {}, 0.0
    if cfg.when == "every" and ctx.shift % cfg.every_shifts:
        return None, {}, 0.0
    from nightshift.supervisor.verify.judge.call import gather_inputs, run_judge

    tests = next((c.summary for c in checks if c.name == "tests"), "no test command")
    inputs = gather_inputs(ctx.run.workspace, cfg, ctx.accepted_base, report, tests, ctx.config.goal,
                           max_bytes=int(ctx.config.verify.max_commit_mb * (1 << 20)))
    outcome = run_judge(cfg, inputs, ctx.judge_spent_usd)
    record = {"available": outcome.available, "passed": outcome.passed, "findings": outcome.findings,
              "error": outcome.error, "notes": list(getattr(outcome, "notes", [])),
              "via": getattr(outcome, "via", "api"), "retry": outcome.retry}
    if not outcome.available:
        # Fail closed: the user asked for a second opinion and did not get one. The shift loop asks again or holds
        # the run for a person (shift/judge_wait.py); the agent is never pushed back over it.
        return Check("judge", False, f"judge unavailable: {outcome.error}"), record, outcome.cost_usd
    fails = [f for f in outcome.findings if f.get("verdict") != "PASS"]
    summary = f"judge: {len(outcome.findings) - len(fails)}/{len(outcome.findings)} criteria pass"
    return Check("judge", outcome.passed, summary, list(outcome.pushback)), record, outcome.cost_usd


STEPS: dict[int, str] = {}  # thread id -> the step its verdict is in (a deadline names it: shift/verdict_clock.py)


def _guarded(name: str, run):
    """Run one check; an error reading its input (bad bytes, a vanished file, a full disk) fails that check."""
    STEPS[threading.get_ident()] = name
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - one check's failure must not end the supervisor
        return unreadable(name, exc)


def verify_stop(ctx: StopContext) -> Verdict:
    cfg, ws = ctx.config, ctx.run.workspace
    out_dir = ctx.run.shift_dir(ctx.shift)
    out_dir.mkdir(parents=True, exist_ok=True)
    claimed = (ctx.claim or {}).get("status")
    # First, before any git of ours runs: the repository's control files as the user left them.
    tried = [r for r in (ctx.state or {}).get("recent_refusals", []) if r.get("rule") == "git_control"]
    git_check = _guarded("git", lambda: check_git_controls(ws, store_of(ctx.run.root), tried))
    checks: list[Check] = [] if git_check.passed else [git_check]
    boundary = _guarded("boundary", lambda: check_boundary(ws, ctx.run.root / "protected"))
    checks.append(boundary)
    restored = boundary.data.get("restored") or {}  # what the agent did to kept files: the ratchet names their tests
    moved: dict[str, str | None] = {}
    if cfg.verify.test_command and ctx.kept_tests():  # a conftest.py the agent added beside kept tests goes aside
        aside = ctx.run.turn_file(ctx.shift, ctx.turn, "moved-aside")
        found = _guarded("boundary", lambda: move_new_config(ws, ctx.run.root / "protected", ctx.kept_tests(), aside))
        if isinstance(found, Check):
            checks.append(found)
        else:
            moved = found
    metric, metrics, report, heldout = None, {}, None, None
    if cfg.oracle is not None:
        found = _guarded("oracle", lambda: _oracle_check(ctx, full=claimed == "done"))
        if isinstance(found, Check):
            checks.append(found)
        else:
            checks.append(found[0])
            metric, metrics, report, heldout = found[1].metric, found[1].metrics, found[1].report, found[1].heldout
    passed_tests: list[str] = []
    if cfg.verify.test_command:
        def tests() -> Check:
            tests_dir = ctx.run.turn_file(ctx.shift, ctx.turn, "tests")
            tests_dir.mkdir(parents=True, exist_ok=True)
            ratchet = Ratchet(kept=set(ctx.passed_before), baseline=set(ctx.baseline),
                              passed_total=ctx.passed_total, restored=restored, moved=moved, goal=set(ctx.goal))
            tree, inside = ctx.in_tree()  # the tests of the commit's tree, beside nightshift's own build
            return check_tests(cfg.verify.test_command, tree.path, cfg.verify.timeout, tests_dir, cfg.verify.junit,
                               ratchet, inside)
        check = _guarded("tests", tests)
        passed_tests = check.data.get("passed_tests", [])
        checks.append(check)
    if cfg.verify.commands:
        def commands() -> Check:
            cmd_dir = ctx.run.turn_file(ctx.shift, ctx.turn, "commands")
            cmd_dir.mkdir(parents=True, exist_ok=True)
            tree, inside = ctx.in_tree()
            return check_commands(cfg.verify.commands, tree.path, cfg.verify.timeout, cmd_dir, inside)
        checks.append(_guarded("commands", commands))
    plan = _guarded("plan", lambda: check_plan(ws / "CLAUDE.md", ctx.plan_known, claimed == "done",
                                               cfg.verify.require_plan))
    checks.append(plan)
    repo = gitops.open_repo(ws)
    checks.append(_guarded("changelog", lambda: check_changelog(
        gitops.changed_since(repo, ctx.shift_base, "CHANGELOG.md"), cfg.verify.require_changelog, ws)))
    changed = _guarded("conflicts", lambda: gitops.worktree_changes(repo))
    if isinstance(changed, Check):  # git status itself failed: that check fails, the verdict goes on
        checks.append(changed)
    else:
        conflicts = _guarded("conflicts", lambda: check_conflicts(changed, ws, gitops.has_conflict_markers))
        nested = _guarded("nested", lambda: check_nested_repos(ws, changed, ctx.run_base(), ctx.prerun()))
        checks += [c for c in (conflicts, nested) if not c.passed]
    if cfg.verify.heldout_tests:  # `init --holdout-tests`: at a claim of done that every other check passes
        others = all(c.passed for c in checks)
        found = _guarded("heldout_tests", lambda: check_heldout_tests(ctx, claimed == "done", others))
        checks.append(found if isinstance(found, Check) else found[0])
        heldout = heldout if isinstance(found, Check) else merge_heldout(heldout, found[1])
    STEPS[threading.get_ident()] = "judge"
    judge_check, judge, judge_cost = _judge_check(ctx, checks, report) if all(c.passed for c in checks) else (None, {}, 0.0)
    if judge_check is not None:
        checks.append(judge_check)
    return _conclude(ctx, checks, claimed, metric, metrics, passed_tests, plan.data.get("items", {}), judge,
                     judge_cost, heldout)


def timed_out(ctx: StopContext, step: str, deadline: float) -> Verdict:
    """The verdict of a stop whose step ``step`` did not answer within ``deadline`` seconds: failed, naming it."""
    summary = f"verdict: the step '{step}' did not answer within {deadline:g}s"
    check = Check("deadline", False, summary, [f"{summary}: it was left behind and this stop fails (a file that "
                                              "blocks a read, a FIFO or a device, or a git that hangs would do this)"])
    return _conclude(ctx, [check], (ctx.claim or {}).get("status"), None, {}, [], {}, None, 0.0, None)


def rejudge(ctx: StopContext, verdict: Verdict) -> Verdict:
    """Ask the judge again about the same stop (it was unavailable), keeping every other check as it was."""
    checks = [c for c in verdict.checks if c.name != "judge"]
    report = next((c.data.get("report") for c in checks if c.name == "oracle"), None)
    spent = replace(ctx, judge_spent_usd=ctx.judge_spent_usd + verdict.judge_cost_usd)  # earlier asks count
    judge_check, judge, cost = _judge_check(spent, checks, report)
    if judge_check is not None:
        checks.append(judge_check)
    return _conclude(ctx, checks, verdict.claimed, verdict.metric, verdict.metrics, verdict.passed_tests,
                     verdict.plan, judge, verdict.judge_cost_usd + cost, verdict.heldout)


def _conclude(ctx: StopContext, checks: list[Check], claimed: str | None, metric: float | None,
              metrics: dict[str, float], passed_tests: list[str], plan: dict[str, bool], judge: dict | None,
              judge_cost: float, heldout: dict | None) -> Verdict:
    ws = ctx.run.workspace
    try:  # newly passed tests, kept as they passed (a full disk must not end the supervisor here either)
        remember(ctx.run.root / "protected", ws, test_files(ws, set(passed_tests) - ctx.released))
    except OSError as exc:
        checks.append(unreadable("boundary", exc))
    checks = [_workspace_relative(c, ws) for c in checks]
    passed = all(c.passed for c in checks)
    failing = [c.summary for c in checks if not c.passed]
    summary = "PASS: " + "; ".join(c.summary for c in checks) if passed else "FAIL: " + "; ".join(failing)
    tier = tier_for(ctx.config.policy.sandbox)  # a weaker boundary is said in the line itself, never only beside it
    summary += "" if tier.name == FULL else f"; {tier.label()}"
    verdict = Verdict(passed, claimed, summary, checks, metric, metrics, passed_tests, plan, judge or None,
                      judge_cost, heldout, tier.name)
    path = ctx.run.turn_file(ctx.shift, ctx.turn, "verdict.json")
    path.write_text(json.dumps(verdict.event_data(ctx.turn), indent=1, default=str))
    return verdict


def _workspace_relative(check: Check, ws) -> Check:
    """The check's words with the workspace's own prefix taken off its paths: `out/final.h5`, not the long
    absolute path, says which file to the agent and the person alike."""
    prefixes = sorted({f"{ws}/", f"{ws.resolve()}/"}, key=len, reverse=True)

    def short(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text
    return replace(check, summary=short(check.summary), lines=[short(line) for line in check.lines])

