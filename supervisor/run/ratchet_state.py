"""The test ratchet in a run's state: its starting set (``tests.baseline``: the tests that passed when the run began,
the goal's tests that failed then, every test collected then, the flaky ones left out, or the count of passing tests where only totals are readable) and what a person released
from it (``test.released``). Folded from the log like the rest, so a resume, a Slurm continuation and a lane keep it.
"""
from __future__ import annotations

from typing import Any


def fold_ratchet(state: dict[str, Any], kind: str, data: dict[str, Any], ts: str | None) -> None:
    """The test ratchet's starting set and what a person released from it (verify/baseline.py, `release`)."""
    if kind == "tests.baseline":
        state["ratchet"] = {"source": data.get("source"), "passing": list(data.get("passing") or []),
                            "flaky": list(data.get("flaky") or []), "per_test": bool(data.get("per_test")),
                            "passed_total": data.get("passed_total"), "runs_said": data.get("runs_said"),
                            "goal": list(data.get("goal") or []), "collected": list(data.get("collected") or []),
                            "released": {}, "ts": ts}
        return
    ratchet = state.get("ratchet") or {"passing": [], "flaky": [], "per_test": True, "passed_total": None,
                                       "released": {}}
    for test_id in data.get("tests") or []:
        ratchet["released"][test_id] = {"why": data.get("why"), "by": data.get("by"), "ts": ts}
    state["ratchet"] = ratchet
