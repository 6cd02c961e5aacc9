"""The ratchet's starting set, taken before the agent's first turn: the test command run in the run's namespace
(twice when one run takes under a minute, so a test whose outcome differs between the two is named flaky and left
out), the tests that passed, the test configuration that selects them, and whether the suite collects at all.

The result is the data of a ``tests.baseline`` event (the preflight's run, or one at the run's start when the
preflight was skipped), folded into the state so a resume, a Slurm continuation and every lane keep it.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.verify.checks import run_tests
from nightshift.supervisor.verify.junit import collection_errors, passed_total

TWICE_UNDER_SECONDS = 60.0  # a suite this quick runs twice at the start, to find the flaky tests
SHOWN_FLAKY = 10


class Baseline(dict):
    """The ``tests.baseline`` event's data (a dict, as the log keeps it) with the questions asked of it."""

    @property
    def problem(self) -> str | None:
        """Why no run may start with this suite (it does not collect), as one line; None when it may."""
        errors = self.get("collect_errors") or []
        if not errors:
            return None
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return (f"the test suite fails to collect: {errors[0]}{more}; fix it (or [verify] test_command) so the "
                "ratchet can start from the tests that pass now")

    def describe(self) -> str:
        """One line for `check` and the log: the starting set, the flaky tests left out, the runs it took."""
        if self.get("per_test"):
            text = (f"{len(self['passing'])} pass now (the ratchet's starting set, protected from the first turn), "
                    f"{self.get('failing', 0)} failing")
            if self.get("goal"):
                text += " (the goal's tests: protected from the first turn too, the user's to change)"
            text += "; per-test results readable (JUnit)"
        elif self.get("passed_total") is not None:
            text = (f"{self['passed_total']} pass now by the runner's own count; per-test results not readable, so "
                    "the ratchet can only count totals: fewer passing tests at a verdict is a regression "
                    "(pytest gives per-test results)")
        else:
            text = (f"`{self.get('command')}` exits {self.get('exit_status')} now; neither per-test results nor a "
                    "count of passing tests is readable, so only the exit status counts")
        flaky = self.get("flaky") or []
        if flaky:
            more = len(flaky) - SHOWN_FLAKY
            names = ", ".join(flaky[:SHOWN_FLAKY]) + (f" and {more} more" if more > 0 else "")
            text += f"; flaky (outcome differed between two runs, left out of the ratchet): {names}"
        return text + f"; {self.get('runs_said', '')}".rstrip("; ")


def _outcomes(results: dict[str, dict[str, str]]) -> dict[str, str]:
    return {t: r["outcome"] for t, r in results.items() if r["outcome"] != "uncollectable"}


def take_baseline(command: str, cwd: Path, timeout: float, out_dir: Path, junit: bool, source: str,
                  boundary: Boundary | None = None, notes: list[str] | None = None) -> Baseline:
    """Run the suite (twice when quick) and return the starting set. ``source``: "preflight" or "start"."""
    first_dir = out_dir / "baseline-1"
    first_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    began = time.monotonic()
    first = run_tests(command, cwd, timeout, first_dir, junit, boundary, notes)
    seconds = time.monotonic() - began
    data: dict[str, Any] = {"source": source, "command": command, "exit_status": first.status,
                            "seconds": round(seconds, 2), "timed_out": first.status is None}
    errors = collection_errors(first.results)
    if errors:
        return Baseline(data, collect_errors=errors, per_test=True, passing=[], flaky=[], runs=1)
    runs = [first]
    if first.status is not None and seconds < TWICE_UNDER_SECONDS:
        second_dir = out_dir / "baseline-2"
        second_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        runs.append(run_tests(command, cwd, timeout, second_dir, junit, boundary, notes))
        said = f"ran twice ({seconds:.0f} s each) to find flaky tests"
    elif first.status is None:
        said = f"timed out after {timeout:g} s: nothing passed"
    else:
        said = f"ran once: it took {seconds:.0f} s (a minute or more), so flaky tests are not looked for"
    outcomes = [_outcomes(run.results) for run in runs]
    per_test = any(outcomes)
    if per_test:
        ids = set().union(*outcomes)
        flaky = sorted(t for t in ids if len({o.get(t, "missing") for o in outcomes}) > 1)
        passing = sorted(t for t in ids if t not in flaky and outcomes[0].get(t) == "passed")
        failing = sum(o in ("failed", "error") for o in outcomes[0].values())
        # The goal's tests: failing when the run began (what the run is to make pass); with the passing ones and
        # the skipped ones, every test collected at the start is the user's and kept from the first turn.
        goal = sorted(t for t in ids if t not in flaky and outcomes[0].get(t) in ("failed", "error"))
        return Baseline(data, per_test=True, passing=passing, failing=failing, flaky=flaky, runs=len(runs),
                        runs_said=said, passed_total=len(passing), goal=goal, collected=sorted(ids))
    totals = [passed_total(run.output) for run in runs if run.status is not None]
    counted = [t for t in totals if t is not None]
    flaky_totals = len(set(counted)) > 1
    if flaky_totals:
        said += f"; the count of passing tests differed between the runs ({' and '.join(map(str, counted))}): " \
                "the lower one is kept"
    return Baseline(data, per_test=False, passing=[], flaky=[], runs=len(runs), runs_said=said,
                    passed_total=min(counted) if counted and len(counted) == len(totals) else None)
