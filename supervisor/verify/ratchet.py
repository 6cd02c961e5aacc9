"""The test ratchet's judgement at a verdict: which tests of the ratchet's set (those that passed when the run began,
and those that passed at a verdict since, less the ones a person released) did not pass now, and which of the goal's
tests (failing when the run began) were changed, hidden, skipped or deselected, each named on a line
with why: "failed", "error", "skipped", "xfailed", "changed" (its file was edited, nightshift put it back) or
"vanished" (its file was deleted or no longer defines it, or the command no longer runs it: deselected).

Without per-test results only the number of passing tests is kept: fewer than before is a regression.
Test files are parsed with ``ast`` (never imported): they are the agent's.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.verify.suite_config import SELECTING, WHOLE_FILE

SHOWN = 30  # regressions named in the verdict (every one is in the turn's tests/regressions.txt)
GOAL = "a goal test, failing when the run began: the goal's tests are the user's"
ASK = "; if the test is wrong, claim blocked (`nightshift claim blocked --summary ...`) and say why: the user decides"


@dataclass
class Ratchet:
    """What a verdict's test check measures against."""
    kept: set[str] = field(default_factory=set)  # every test id that must pass
    baseline: set[str] = field(default_factory=set)  # those of them that passed when the run began
    passed_total: int | None = None  # without per-test results: how many passed at best so far
    restored: dict[str, bytes | None] = field(default_factory=dict)  # files put back at this stop: the agent's bytes
    moved: dict[str, str | None] = field(default_factory=dict)  # new test configuration found at this stop: where it
    # was moved aside, or None for a project file's new pytest section (named, left in place)
    goal: set[str] = field(default_factory=set)  # the goal's tests: failing at the start, the user's all the same

    def unmet(self, results: dict[str, dict[str, str]]) -> list[str]:
        """The goal's tests that did not pass now (a verdict with one of them is no pass, whatever the exit status)."""
        return sorted(t for t in self.goal - self.kept if (results.get(t) or {}).get("outcome") != "passed")


def _split(test_id: str) -> tuple[str, list[str]]:
    """("tests/test_io.py", ["TestIO", "test_roundtrip"]) for a node id; parameters dropped."""
    head, *rest = test_id.split("::")
    return head, [re.sub(r"\[.*\]$", "", part) for part in rest]


def definition(source: bytes | None, names: list[str]) -> str | None:
    """The test's definition (decorators and body) as an AST dump, or None when the source does not define it."""
    if source is None or not names:
        return None
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    node = None
    for name in names:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == name), None)
        if node is None:
            return None
        body = node.body if isinstance(node, ast.ClassDef) else []
    return ast.dump(node)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _renamed(test_id: str, results: dict[str, dict[str, str]]) -> str:
    """A hint when a test of the same name runs elsewhere now (a rename a person may accept with a release)."""
    name = test_id.rsplit("::", 1)[-1]
    twins = [t for t in results if t != test_id and t.rsplit("::", 1)[-1] == name]
    return f"; {twins[0]} runs now: renamed?" if twins else ""


def _vanished_why(test_id: str, root: Path, results: dict[str, dict[str, str]],
                  restored: dict[str, bytes | None]) -> str | None:
    """Why a test of the set is missing from the results; None when it is not missing."""
    rel, names = _split(test_id)
    if rel in restored:  # the agent deleted or edited its file; nightshift put it back before the tests ran
        agent = restored[rel]
        if agent is None:
            return "its file was deleted; nightshift put it back" + _renamed(test_id, results)
        if definition(agent, names) is None and definition(_read(root / rel), names) is not None:
            return "its file no longer defined it; nightshift put the file back" + _renamed(test_id, results)
    if test_id in results:
        return None
    if not rel.endswith(".py"):
        return "no longer in the test command's results"
    uncollectable = results.get(rel)
    if uncollectable is not None:
        return f"its file fails to collect: {uncollectable['message'].splitlines()[-1][:160]}"
    source = _read(root / rel)
    if source is None:
        return "its file was deleted" + _renamed(test_id, results)
    if definition(source, names) is None:
        return "its file no longer defines it" + _renamed(test_id, results)
    return ("deselected: its file still defines it but the test command no longer runs it; a conftest.py, pytest.ini, "
            "setup.cfg, tox.ini or pyproject.toml option, or the command, changed what runs")


def _changed(test_id: str, root: Path, restored: dict[str, bytes | None]) -> bool:
    """Its file was edited at this stop (and put back) in this test's own definition: its body or its markers."""
    rel, names = _split(test_id)
    if rel not in restored or restored[rel] is None:
        return False
    return definition(restored[rel], names) != definition(_read(root / rel), names)


def judge(ratchet: Ratchet, results: dict[str, dict[str, str]], root: Path) -> tuple[list[str], list[str]]:
    """(regressed test ids, one line per regression) for per-test results."""
    regressed, lines = [], []
    for test_id in sorted(ratchet.kept | ratchet.goal):
        goal = test_id not in ratchet.kept
        when = "passed at the start" if test_id in ratchet.baseline else "passed at an earlier verdict"
        when = GOAL if goal else when
        why = _vanished_why(test_id, root, results, ratchet.restored)
        result = results.get(test_id)
        if why is not None:
            line = f"vanished: {test_id} ({GOAL + '; ' if goal else ''}{why}{ASK if goal else ''})"
        elif _changed(test_id, root, ratchet.restored):
            line = (f"changed: {test_id} ({when}; its body or markers were edited; nightshift put its file back"
                    f"{ASK if goal else ''})")
        elif result is None or result["outcome"] == "passed":
            continue
        elif goal and result["outcome"] in ("failed", "error"):
            continue  # still failing: the run's work to do, named with the failures, not a regression
        else:
            outcome = result["outcome"]
            said = (result["message"].splitlines() or [""])[0][:200]
            now = {"xfailed": "now marked as an expected failure",
                   "skipped": "now skipped"}.get(outcome, f"now {outcome}")
            line = f"{outcome}: {test_id} ({when}; {now}{': ' + said if said else ''})"
        regressed.append(test_id)
        lines.append(line)
    for rel in sorted(ratchet.restored):  # what selects the tests: an edit there can change what runs
        if (Path(rel).name in SELECTING or Path(rel).name in WHOLE_FILE) and ratchet.kept:
            regressed.append(rel)
            lines.append(f"changed: {rel} ({'deleted' if ratchet.restored[rel] is None else 'edited'}: it is the test "
                         "configuration that selects the ratchet's tests; nightshift put it back)")
    for rel, where in sorted(ratchet.moved.items()):
        regressed.append(rel)
        if where is None:
            lines.append(f"new: {rel} (it has a pytest section now, {SELECTING[Path(rel).name].rstrip(']')}...], that "
                         "it did not have when the run began: it can change what the ratchet's tests run or how they "
                         "report; take that section out (the rest of the file is yours), or ask the user)")
            continue
        lines.append(f"new: {rel} (test configuration on the way to the ratchet's tests that was not there when the "
                     f"run began: it can change what they run or how they report; nightshift moved it to {where}; "
                     "give new tests' fixtures a folder of their own, or ask the user)")
    return regressed, lines


def judge_totals(ratchet: Ratchet, passed_now: int | None) -> list[str]:
    """Without per-test results: a drop in the number of passing tests is the one regression that can be seen."""
    if ratchet.passed_total is None:
        return []
    if passed_now is None:
        return [f"the number of passing tests is not readable now ({ratchet.passed_total} passed before; per-test "
                "results are not readable either): the ratchet cannot tell that nothing regressed"]
    if passed_now < ratchet.passed_total:
        return [f"fewer tests pass: {passed_now} now, {ratchet.passed_total} before (per-test results are not "
                "readable, so the ratchet counts totals: a drop is a regression)"]
    return []


def shown(lines: list[str], full: Path | None) -> list[str]:
    """The first SHOWN regressions, and where the rest are."""
    if len(lines) <= SHOWN:
        return lines
    where = f" (every one in {full})" if full is not None else ""
    return lines[:SHOWN] + [f"... and {len(lines) - SHOWN} more regression(s){where}"]
