"""The report's lines about a run's held-out tests (`init --holdout-tests`): each claim's run of them over its
candidate tree, test by test, from the private reports beside the store (verify/heldout_tests.py). Only in a copy
written outside the workspace: inside it, where the agent reads, they are left out and the place to find them named.
"""
from __future__ import annotations

from pathlib import Path


def heldout_tests_lines(store: Path | None, run_id: str, full: bool) -> list[str]:
    """``store``: the report's heldout_tests (None: the run holds no test out)."""
    from nightshift.supervisor.run.heldout_tests_record import read_reports

    if store is None:
        return []
    runs = read_reports(store, run_id)
    if not full:
        return [f"held-out tests: {len(runs)} claim(s) graded by them; their outcomes are left out of this copy (it "
                "is inside the workspace, where the agent reads it)"]
    if not runs:
        return ["held-out tests: not run yet (they run at a claim of done that passes every other check)"]
    last = runs[-1]
    outcomes = last.get("outcomes") or {}
    lines = [f"held-out tests at {last['name']} (candidate tree {str(last.get('tree') or '?')[:12]}): "
             f"{sum(o == 'passed' for o in outcomes.values())} of {len(outcomes)} pass"
             + (f"; {last['problem']}" if last.get("problem") else "")]
    lines += [f"  {test_id}: {outcome}" for test_id, outcome in sorted(outcomes.items())]
    for test_id, found in sorted((last.get("always_equal") or {}).items()):
        lines.append(f"  {test_id}: compared an object equal to anything: {', '.join(found)}")
    return lines
