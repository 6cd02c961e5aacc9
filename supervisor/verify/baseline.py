"""The ratchet's starting set, taken before the agent's first turn: the test command run in the run's namespace
(twice when one run takes under a minute, so a test whose outcome differs between the two is named flaky and left
out), the tests that passed, the test configuration that selects them, and whether the suite collects at all.

The result is the data of a ``tests.baseline`` event (the preflight's run, or one at the run's start when the
preflight was skipped), folded into the state so a resume, a Slurm continuation and every lane keep it.
"""
from __future__ import annotations

import re
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
        """Why no run may start with this suite (it cannot run, runs nothing, or does not collect), as one line; None
        when it may."""
        if self.get("cannot_run"):
            return str(self["cannot_run"])
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
            text += "; per-test results readable (nightshift's pytest plugin)"
            text += (", every graded run carries sentinels" if self.get("sentinels", 1) else
                     "; no test is of a shape a sentinel that must fail derives from (a plain test function with a "
                     "top-level `assert x == expected`): the runs cannot be shown able to fail")
        elif self.get("passed_total") is not None:
            text = (f"{self['passed_total']} pass now by the runner's own count; per-test results not readable, so "
                    "the ratchet can only count totals: fewer passing tests at a verdict is a regression "
                    "(pytest gives per-test results)")
        else:
            text = (f"`{self.get('command')}` exits {self.get('exit_status')} now; neither per-test results nor a "
                    "count of passing tests is readable, so only the exit status counts")
        if not self.get("per_test"):
            text += (f"; {UNSHOWN}" if self.get("plugin") is False and not self.get("pytest_seen")
                     else f"; {UNLOADED}" if self.get("plugin") is False else "")
        flaky = self.get("flaky") or []
        if flaky:
            more = len(flaky) - SHOWN_FLAKY
            names = ", ".join(flaky[:SHOWN_FLAKY]) + (f" and {more} more" if more > 0 else "")
            text += f"; flaky (outcome differed between two runs, left out of the ratchet): {names}"
        return text + f"; {self.get('runs_said', '')}".rstrip("; ")


UNSHOWN = ("this runner cannot be shown able to fail: sentinels (tests that must fail, run beside the real ones) go "
           "only into pytest, and no pytest of this command reported")
UNLOADED = ("pytest ran but nightshift's plugin did not reach it (the command, or a script it starts, sets PYTHONPATH or "
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD itself, or tox filters the environment: pass NIGHTSHIFT_* and PYTHONPATH "
            "through): no per-test results, equality probe or sentinels; run pytest from the test command directly")


def _outcomes(results: dict[str, dict[str, str]]) -> dict[str, str]:
    return {t: r["outcome"] for t, r in results.items() if r["outcome"] != "uncollectable"}


def take_baseline(command: str, cwd: Path, timeout: float, out_dir: Path, junit: bool, source: str,
                  boundary: Boundary | None = None, notes: list[str] | None = None) -> Baseline:
    """Run the suite (twice when quick) and return the starting set. ``source``: "preflight" or "start"."""
    first_dir = out_dir / "baseline-1"
    first_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    data: dict[str, Any] = {"source": source, "command": command}
    bad_shell = shell_problem(command)
    if bad_shell:
        return Baseline(data, exit_status=2, seconds=0, timed_out=False, cannot_run=bad_shell, per_test=False,
                        passing=[], flaky=[], runs=0, passed_total=None)
    began = time.monotonic()
    first = run_tests(command, cwd, timeout, first_dir, junit, boundary, notes)
    seconds = time.monotonic() - began
    data.update({"exit_status": first.status, "seconds": round(seconds, 2), "timed_out": first.status is None,
                 "plugin": first.plugin if junit else None, "pytest_seen": _pytest_seen(first.output)})
    cannot = cannot_run(command, first)
    if cannot:
        return Baseline(data, cannot_run=cannot, per_test=False, passing=[], flaky=[], runs=1, passed_total=None)
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
        from nightshift.supervisor.verify.sentinels import choose
        data["sentinels"] = len(choose(cwd, passing + goal, must_fail=1, must_pass=0))
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


def shell_problem(command: str) -> str | None:
    """Why bash cannot parse the test command (it is run with ``bash -c``); None when it parses."""
    import subprocess

    parsed = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, check=False)
    if parsed.returncode == 0:
        return None
    said = " ".join(parsed.stderr.replace("bash: -c: ", "").split())[:200]
    return f"[verify] test_command `{command}` is not valid shell ({said}): fix its quoting or syntax"


_MISSING_MODULE = re.compile(r"No module named ['\"]?([\w.]+)")
_PYTEST_SUMMARY = re.compile(r"(no tests ran|\d+ (passed|failed|errors?|skipped)) in [\d.]+s")


def _pytest_seen(output: str) -> bool:
    return bool(_PYTEST_SUMMARY.search(output)) or "usage: " in output and "pytest" in output


def cannot_run(command: str, ran) -> str | None:
    """Why the test command cannot serve a run, from its first run: it is missing or its module is, its runner
    refused its arguments, or it ran no test at all. None when it ran tests (passing or not)."""
    if ran.status is None or ran.results:
        return None
    tail = " | ".join([line for line in ran.output.strip().splitlines() if line.strip()][-2:])[:200]
    fix = "fix [verify] test_command in nightshift.toml"
    if ran.status in (126, 127):
        return f"`{command}` cannot run ({tail or f'exit status {ran.status}'}): install it, or {fix}"
    missing = _MISSING_MODULE.search(ran.output)
    if missing and ran.status != 0 and passed_total(ran.output) is None:
        return (f"`{command}` cannot run: No module named {missing.group(1)} (in the interpreter the command starts): "
                f"install {missing.group(1)} there (a virtual environment: `python3 -m venv .venv && "
                f".venv/bin/pip install {missing.group(1)}`), or {fix}")
    if ran.status == 4 and _pytest_seen(ran.output) or "error: unrecognized arguments" in ran.output:
        return f"`{command}`: pytest refused its arguments ({tail}): {fix}"
    if ran.status == 5 or (ran.status == 0 and (ran.plugin or passed_total(ran.output) == 0)
                           and not (passed_total(ran.output) or 0)):
        return (f"`{command}` ran no test (no tests ran: exit status {ran.status}): point it at the tests (a path, or "
                f"pytest's testpaths), or {fix}")
    return None
