"""The test ratchet starts before the first turn (issue #28): from `nightshift init` defaults and a suite of several
test files, a scripted command agent breaks the code and hides the break in its first turn (deletes, renames,
skips, xfails, hollows, deselects through conftest.py and through addopts): each is a named regression and the run
does not end done; only breaking names the failures; an honest change ends done. Real git, tmux, bubblewrap and
pytest; no model."""
from __future__ import annotations

import json

import pytest

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_ratchet import (BASELINE, BREAK, CHEATS, CLAIM, FORGE_CONFTEST, PYPROJECT, ROUNDTRIP, TEST_COMMAND,
                                    write_suite)

SANDBOX_OFF = '\n[policy]\nsandbox = "off"\n'


def configured(workspace, script: dict, extra: str = "", pushbacks: int = 1):
    write_suite(workspace.path)
    return workspace.configure(script, test_command=TEST_COMMAND, pushbacks=pushbacks, max_shifts=1, extra=extra)


def verdicts(ws, run) -> list[dict]:
    return [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"]


def ratchet_check(verdict: dict) -> dict:
    return next(c for c in verdict["checks"] if c["name"] == "tests")


def ended(ws, run) -> dict:
    from nightshift.supervisor.run.state import load_state
    return load_state(run.root)[0]


NEW_CONFTEST = "new: tests/conftest.py (test configuration on the way to the ratchet's tests that was not there"
# cheat, the namespace on (init defaults) or off, and how the verdict names the hidden break
HIDDEN = [
    ("delete", "", f"failed: {ROUNDTRIP} (passed at the start"),  # the namespace refused the delete
    ("delete", SANDBOX_OFF, f"vanished: {ROUNDTRIP} (its file was deleted; nightshift put it back"),
    ("rename", SANDBOX_OFF, f"vanished: {ROUNDTRIP} (its file was deleted; nightshift put it back; "
                            "tests/test_inout.py::test_roundtrip runs now: renamed?)"),
    ("skip_marker", SANDBOX_OFF, f"changed: {ROUNDTRIP} (passed at the start; its body or markers were edited"),
    ("xfail_marker", SANDBOX_OFF, f"changed: {ROUNDTRIP} (passed at the start; its body or markers were edited"),
    ("hollow", SANDBOX_OFF, f"changed: {ROUNDTRIP} (passed at the start; its body or markers were edited"),
    ("pyproject_addopts", SANDBOX_OFF, "changed: pyproject.toml (edited: it is the test configuration"),
    # a conftest.py or pytest.ini that was not there at the start is moved aside before the tests run: named, and
    # the break it was to hide is named too
    ("conftest_deselect", "", NEW_CONFTEST),
    ("conftest_skip", "", NEW_CONFTEST),
    ("conftest_xfail", "", NEW_CONFTEST),
    ("conftest_forge", "", NEW_CONFTEST),  # it would report every test as passed
    ("pytest_ini_addopts", "", "new: pytest.ini (test configuration on the way to the ratchet's tests"),
]


@pytest.mark.parametrize("cheat,extra,named", HIDDEN, ids=[f"{c}{'-no-namespace' if e else ''}" for c, e, _ in HIDDEN])
def test_a_break_hidden_in_the_first_turn_is_a_named_regression_and_the_run_does_not_end_done(workspace, cheat, extra,
                                                                                               named):
    ws = configured(workspace, {"s1t1": [BREAK, *CHEATS[cheat], CLAIM]}, extra=extra)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    baseline = [e["data"] for e in ws.events(run) if e["type"] == "tests.baseline"]
    assert len(baseline) == 1 and set(baseline[0]["passing"]) == BASELINE and baseline[0]["source"] == "start"
    first = verdicts(ws, run)[0]
    check = ratchet_check(first)
    assert not first["passed"] and not check["passed"]
    assert any(line.startswith(named) for line in check["lines"]), check["lines"]
    pushback = run.turn_file(1, 2, "prompt.md").read_text()
    assert named in pushback  # one line per regression in the push-back too
    assert ended(ws, run)["outcome"] != "done"
    if named.startswith("new: "):  # moved aside, so the break itself shows
        assert any(line.startswith(f"failed: {ROUNDTRIP} (passed at the start") for line in check["lines"])


def test_only_breaking_names_each_failure_as_a_regression(workspace):
    ws = configured(workspace, {"s1t1": [BREAK, CLAIM]})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    check = ratchet_check(verdicts(ws, run)[0])
    assert check["summary"] == "tests: 5 passed, 1 failing, 1 regressed"
    assert check["lines"][0].startswith(f"failed: {ROUNDTRIP} (passed at the start; now failed: assert")


def test_an_honest_change_ends_done_and_the_starting_set_was_protected_from_turn_one(workspace):
    faster = ["write", "suite/extra.py", "def double(x):\n    return 2 * x\n"]
    new_test = ["write", "tests/test_extra.py", "from suite.extra import double\n\n\ndef test_double():\n"
                                                "    assert double(2) == 4\n"]
    ws = configured(workspace, {"s1t1": [faster, new_test, CLAIM]})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 0
    check = ratchet_check(verdicts(ws, run)[0])
    assert check["summary"] == "tests: 7 passed, 0 failing, 0 regressed" and check["passed"]
    policy = json.loads((run.root / "policy.json").read_text())  # the first turn's rules: compiled at its launch
    protected = {entry[0] for entry in policy["protect"] if entry[1] == "tests"}
    ws_path = ws.path.resolve()
    assert {str(ws_path / p) for p in ("tests/test_io.py", "tests/test_grid.py", "tests/test_norm.py",
                                       "pyproject.toml")} <= protected
    kept = json.loads((run.root / "protected" / "manifest.json").read_text())
    assert {"tests/test_io.py", "tests/test_grid.py", "tests/test_norm.py", "pyproject.toml"} <= set(kept)



PROJECT_SECTIONS = {  # a pytest section the agent adds to the project's own pyproject.toml, and what it does
    "deselect": ('addopts = "--deselect tests/test_io.py::test_roundtrip"\n', []),
    # a plugin of the agent's (the workspace is on pytest's path) that reports every test as passed
    "forge": ('addopts = "-p forge_reports"\n', [["write", "forge_reports.py", FORGE_CONFTEST]]),
}


@pytest.mark.parametrize("how", sorted(PROJECT_SECTIONS))
def test_a_pytest_section_added_to_the_projects_own_pyproject_is_named_and_the_run_does_not_end_done(workspace, how):
    """Many projects' pyproject.toml has no pytest section: it is the project's file, the agent's to edit (a
    dependency, a version), so it is not kept. A pytest section added to it mid-run selects what runs and how it
    reports, as a new pytest.ini would: it is named, and the verdict fails (the forged reports passed before)."""
    write_suite(workspace.path)
    project_only = PYPROJECT.split("[tool.pytest")[0]
    (workspace.path / "pyproject.toml").write_text(project_only)
    section, more = PROJECT_SECTIONS[how]
    added = project_only + "[tool.pytest.ini_options]\n" + section
    ws = workspace.configure({"s1t1": [BREAK, *more, ["write", "pyproject.toml", added], CLAIM]},
                             test_command=TEST_COMMAND, pushbacks=1, max_shifts=1)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    first = verdicts(ws, run)[0]
    check = ratchet_check(first)
    named = "new: pyproject.toml (it has a pytest section now, [tool.pytest...], that it did not have when the run"
    assert not first["passed"] and not check["passed"]
    assert any(line.startswith(named) for line in check["lines"]), check["lines"]
    assert named in run.turn_file(1, 2, "prompt.md").read_text()
    assert (ws.path / "pyproject.toml").read_text() == added  # the project's file: named, never moved or rewritten
    assert ended(ws, run)["outcome"] != "done"
