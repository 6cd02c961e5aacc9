"""The held-out tests' exam (`init --holdout-tests`, issue #36): at a claim of done the supervisor runs them over the
candidate (verify/heldout_checkout.py) and the claim is not done unless every one passes and none compared an
object that equals everything. The agent learns pass, or fail and a coarse band of how many pass, nothing more:
- at any other stop it hears they are evaluated at a claim of done;
- the Ladder (the reference exam's own, oracle/exam.ladder): a failing band is told only when better than the best
  so far;
- each answer costs at most log2(the answers it could have given) bits, counted in the run's held-out account
  with the reference exam's; past ``[verify] heldout_budget`` nothing more is released.
The full outcomes, test by test, go to a private report the user's views read (run/heldout_tests_record.py).
"""
from __future__ import annotations

import math
from pathlib import Path

from nightshift.supervisor.run.heldout_tests_record import report_name, write_report
from nightshift.supervisor.verify.checks import Check
from nightshift.supervisor.verify.oracle.exam import answers, ladder

KEY = "(held-out tests)"  # the exam's account keeps the tests' best band under this name
BANDS = ("pass", "fail: at least 90% of them pass", "fail: at least half of them pass",
         "fail: fewer than half of them pass (or they did not run)")
FLOOR = len(BANDS) - 1
BUDGET_KEY = "[verify] heldout_budget"  # what withholds the tests' answers (the references': [oracle]'s)
AT_CLAIM = "held-out tests: evaluated only when you claim done (`nightshift claim done`)"
NOT_RUN = "held-out tests: not run: this claim fails other checks first (they run at a claim that passes the rest)"
UNAVAILABLE = "held-out tests: not evaluated: they are unavailable (the run pauses until the user restores them)"
WITHHELD = "held-out tests: not released (the run's held-out budget is spent): ask the user"
FORGED_RUN = ("the run of the held-out tests reported a test that must fail as passed, or lost one: something in "
              "the workspace forges results (a conftest.py or a module that rewrites pytest's reports); take it out")
ALWAYS_EQUAL = ("held-out tests: a value compared in them equals anything it is compared with, {what}: that is "
                "equality forged, not an answer; return plain values")


def band(passed: int, total: int) -> int:
    if total and passed == total:
        return 0
    share = passed / total if total else 0.0
    return 1 if share >= 0.9 else 2 if share >= 0.5 else FLOOR


def check_heldout_tests(ctx, claimed_done: bool, others_pass: bool = True,
                        oracle_released: dict | None = None) -> tuple[Check, dict | None]:
    """The verdict's check and what it released (None: nothing), from the StopContext ``ctx``; ``oracle_released``:
    what this verdict's reference exam released already (its bits count against the budget too). A claim that fails
    another check is not done whatever they say: they are not run, and nothing is released."""
    from nightshift.supervisor.verify.boundary import _manifest
    from nightshift.supervisor.verify.heldout_checkout import run_heldout

    cfg = ctx.config.verify
    if not claimed_done:
        return Check("heldout_tests", True, AT_CLAIM), None
    if not others_pass:
        return Check("heldout_tests", True, NOT_RUN), None
    held = (ctx.state or {}).get("heldout") or {}
    best = int((held.get("best") or {}).get(KEY, FLOOR))
    cost = math.log2(answers(best))
    spent = float(held.get("bits") or 0.0) + float((oracle_released or {}).get("bits") or 0.0)
    if spent + cost > cfg.heldout_budget + 1e-9:
        return Check("heldout_tests", False, WITHHELD, [WITHHELD]), {"evaluations": 0, "bits": 0.0,
                                                                      "withheld": True, "best": {},
                                                                      "withheld_by": BUDGET_KEY}
    store = Path(cfg.heldout_tests).expanduser()
    name = report_name(ctx.run.run_id, ctx.shift, ctx.turn)
    found = run_heldout(ctx.run.workspace, store, name, cfg.test_command, cfg.timeout, ctx.boundary(),
                        set(_manifest(ctx.run.root / "protected")), int(cfg.max_commit_mb * (1 << 20)))
    _write_report(store, name, found)
    if found.problem:  # nothing was measured, so nothing is released: the run pauses for the user (shift/decide.py)
        return Check("heldout_tests", False, UNAVAILABLE, [UNAVAILABLE]), {"evaluations": 0, "bits": 0.0,
                                                                           "withheld": False, "best": {},
                                                                           "unavailable": {KEY: found.problem}}
    total = len(found.outcomes)
    now = band(found.passed, total)
    word = ladder(best, now, BANDS, "fail (they passed at an earlier claim)",
                  lambda b: f"fail, no better than your best so far ({b.split(': ', 1)[1]})")
    lines = [] if now == 0 else [f"held-out tests: {word}"]
    forged = sorted({what for values in found.always_equal.values() for what in values})
    if forged:
        lines.append(ALWAYS_EQUAL.format(what=", ".join(forged)))
    # The sentinels' findings name no held-out test (their lines name "a changed copy of <id>": dropped to a count)
    lines += [f"held-out tests: {FORGED_RUN}"] if found.sentinels else []
    passed = now == 0 and not forged and not found.sentinels
    summary = f"held-out tests: {word}" + ("; an object that equals anything was compared" if forged else "") + (
        "; the run forged its results" if found.sentinels else "")
    record = {"evaluations": 1, "bits": round(cost, 6), "withheld": False, "best": {KEY: min(best, now)},
              "tests": {"tree": found.tree, "total": total, "always_equal": bool(forged)}}
    return Check("heldout_tests", passed, summary, lines, {"always_equal": forged}), record


def _write_report(store: Path, name: str, found) -> None:
    write_report(store, name, {"tree": found.tree, "outcomes": found.outcomes, "always_equal": found.always_equal,
                               "sentinels": found.sentinels, "problem": found.problem})


def merge(oracle: dict | None, tests: dict | None) -> dict | None:
    """One release record for the verdict: the reference exam's and the tests' (the fold sums them)."""
    if not oracle or not tests:
        return oracle or tests
    return {**oracle, "evaluations": oracle.get("evaluations", 0) + tests["evaluations"],
            "bits": round(float(oracle.get("bits") or 0) + tests["bits"], 6),
            "withheld": bool(oracle.get("withheld") or tests.get("withheld")),
            **({"withheld_by": tests["withheld_by"]} if tests.get("withheld") else {}),
            "best": {**(oracle.get("best") or {}), **tests["best"]}, "tests": tests.get("tests"),
            **({"unavailable": gone} if (gone := {**(oracle.get("unavailable") or {}),
                                                  **(tests.get("unavailable") or {})}) else {})}
