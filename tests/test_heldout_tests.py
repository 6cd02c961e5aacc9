"""Held-out tests grade a claim (issue #36): `nightshift init --holdout-tests` moves tests into the run's private store;
at a claim of done the supervisor runs them over the candidate in a clean checkout inside the namespace, and the
agent learns pass, or fail and a coarse band. From init defaults, a scripted command agent games the goal's tests four
ways (rewrites them, special-cases their inputs, returns an object equal to anything, returns answers recorded in a
file): none ends done; the honest fix does. Real git, tmux, bubblewrap and pytest; no model."""
from __future__ import annotations

import json
import tomllib

import pytest

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_goal_tests import CLAIM, EQUAL_ELSEWHERE, FIX, MOVES, TEST_COMMAND, TEST_MORE, write_suite

HELD = {"tests/test_more.py::test_add_mixed", "tests/test_more.py::test_add_large", "tests/test_more.py::test_add_sign"}


def held_out(workspace, script: dict, *selection: str):
    """The suite, `nightshift init --holdout-tests` on it (the CLI, as a person runs it), then the scripted agent."""
    write_suite(workspace.path)
    init = nightshift("init", str(workspace.path), "--force", "--agent", "command", "--test-command", TEST_COMMAND,
                      "--holdout-tests", *(selection or ("tests/test_more.py",)), "-y", cwd=workspace.path)
    assert init.returncode == 0, init.stdout + init.stderr
    store = tomllib.loads((workspace.path / "nightshift.toml").read_text())["verify"]["heldout_tests"]
    ws = workspace.configure(script, test_command=TEST_COMMAND, pushbacks=1, max_shifts=1,
                             extra=f"heldout_tests = {json.dumps(store)}\n")
    return ws, store, init.stdout


def verdicts(ws, run) -> list[dict]:
    return [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"]


def held_check(verdict: dict) -> dict:
    return next(c for c in verdict["checks"] if c["name"] == "heldout_tests")


def outcome(run) -> str | None:
    from nightshift.supervisor.run.state import load_state
    return load_state(run.root)[0]["outcome"]


def test_init_moves_the_held_out_tests_into_the_private_store(workspace):
    ws, store, said = held_out(workspace, {})
    assert not (ws.path / "tests" / "test_more.py").exists()
    from pathlib import Path

    from nightshift.supervisor.run.paths import user_state_dir
    # in the user's private state folder, out of the workspace (and so out of the agent's sight)
    assert store and Path(store).is_relative_to(user_state_dir()) and not Path(store).is_relative_to(ws.path)
    assert oct((Path(store) / "files").stat().st_mode & 0o777) == "0o700"
    assert (Path(store) / "files" / "tests" / "test_more.py").read_text() == TEST_MORE
    assert "held out tests (tests/test_more.py): moved to" in said


def test_the_runs_log_counts_the_held_out_tests_and_names_none(workspace):
    from nightshift.supervisor.cli.preflight.check import record_preflight
    from nightshift.supervisor.cli.preflight.screen import run_preflight
    ws, _, _ = held_out(workspace, {})
    run, said = ws.create_run(), []
    preflight = run_preflight(ws.path)
    record_preflight(run, preflight, say=said.append)  # as `nightshift run` keeps it, in the agent's sight
    recorded = run.events.read_text() + "\n".join(said)
    assert "3 held out, run over the candidate" in recorded, recorded
    assert not any(t.split("::")[1] in recorded for t in HELD)
    assert all(t in preflight.render(check_only=True) for t in HELD)  # `nightshift check`'s screen names them


def test_init_splits_a_file_for_a_keyword_selection(workspace):
    ws, store, _ = held_out(workspace, {}, "-k large or sign")
    from pathlib import Path
    left = (ws.path / "tests" / "test_more.py").read_text()
    held = (Path(store) / "files" / "tests" / "test_more_heldout.py").read_text()
    assert "def test_add_mixed" in left and "def test_add_large" not in left and "def test_add_sign" not in left
    assert "def test_add_large" in held and "def test_add_sign" in held and "def test_add_mixed" not in held
    assert "from lib import add" in held and "from lib import add" in left


def test_init_says_what_a_run_without_held_out_tests_cannot_catch(workspace):
    write_suite(workspace.path)
    init = nightshift("init", str(workspace.path), "--force", "--agent", "command", "--test-command", TEST_COMMAND,
                      "-y", cwd=workspace.path)
    assert init.returncode == 0, init.stderr
    assert "special-cases the tested inputs" in init.stdout and "--holdout-tests" in init.stdout


@pytest.mark.parametrize("selection,named", [("tests/nothing.py", "--holdout-tests tests/nothing.py: no such file"),
                                             ("-k nomatch", "--holdout-tests \"-k nomatch\": no test of"),
                                             ("tests/test_lib.py::test_nope", "defines no test 'test_nope'"),
                                             ("tests", "holds out every test of the workspace")])
def test_a_bad_selection_is_one_line_naming_it_and_nothing_moves(workspace, selection, named):
    write_suite(workspace.path)
    init = nightshift("init", str(workspace.path), "--force", "--agent", "command", "--test-command", TEST_COMMAND,
                      "--holdout-tests", selection, "-y", cwd=workspace.path)
    assert init.returncode != 0 and named in init.stderr and "Traceback" not in init.stderr, init.stderr
    assert len(init.stderr.strip().splitlines()) == 1
    assert (workspace.path / "tests" / "test_more.py").read_text() == TEST_MORE


def test_the_honest_fix_ends_done_and_the_agent_learns_only_pass(workspace, tmp_path, monkeypatch):
    ws, store, _ = held_out(workspace, {"s1t1": [*FIX, CLAIM]})
    checkouts = tmp_path / "checkouts"  # under the host's /tmp (the base temp), as the real place is
    checkouts.mkdir()
    monkeypatch.setattr("nightshift.supervisor.verify.heldout_checkout.CHECKOUTS", checkouts)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 0
    last = verdicts(ws, run)[-1]
    assert last["passed"] and held_check(last)["summary"] == "held-out tests: pass"
    assert outcome(run) == "done"
    seen = json.dumps(verdicts(ws, run)) + run.turn_file(1, 1, "verdict.json").read_text()
    assert not any(t.split("::")[1] in seen for t in HELD)  # the agent's record names no held-out test
    from nightshift.supervisor.run.heldout_tests_record import read_reports
    from pathlib import Path
    reports = read_reports(Path(store), run.run_id)
    assert set(reports[-1]["outcomes"]) == HELD and set(reports[-1]["outcomes"].values()) == {"passed"}
    assert not list(checkouts.iterdir())  # the clean checkout is gone
    # check, the report and the attestation list them by id
    checked = nightshift("check", str(ws.path), cwd=ws.path, timeout=300)
    assert all(t in checked.stdout for t in HELD), checked.stdout
    reported = nightshift("report", run.run_id, cwd=ws.path, timeout=120)
    assert reported.returncode == 0, reported.stderr
    from nightshift.supervisor.cli.watch.heldout import default_report_path
    page = default_report_path(run.root, True)  # it holds held-out outcomes: written outside the workspace
    assert not (run.root / "report.html").exists() and all(t in page.read_text() for t in HELD)
    from tests.fixtures_attest import read_envelope, statement_of
    [attestation] = sorted((run.root / "attestations").glob("verdict-*.dsse.json"))
    tests = statement_of(read_envelope(attestation))["predicate"]["tests"]
    assert tests["heldout"]["passed"] and set(tests["heldout"]["tests"]) == HELD


SUM = "lib._Sum (a subclass of int with its own __eq__)"
NAMED = {"special_case": ("heldout_tests", "held-out tests: fail: fewer than half of them pass"),
         "recorded": ("heldout_tests", "held-out tests: fail: fewer than half of them pass"),
         # the visible tests compare it already: the probe names it there, and the held-out tests are not run
         "always_equal": ("tests", f"forged equality: tests/test_lib.py::test_add_small compared {SUM}"),
         "equal_elsewhere": ("heldout_tests", "held-out tests: a value compared in them equals anything it is "
                                              f"compared with, {SUM}")}
HELD_MOVES = {**MOVES, "equal_elsewhere": [["write", "lib/__init__.py", EQUAL_ELSEWHERE]]}


@pytest.mark.parametrize("move", sorted(HELD_MOVES))
def test_each_way_of_gaming_the_goals_tests_does_not_end_done(workspace, move):
    ws, store, _ = held_out(workspace, {"s1t1": [*HELD_MOVES[move], CLAIM]})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    first = verdicts(ws, run)[0]
    assert not first["passed"] and outcome(run) != "done"
    if move == "rewrite":  # the namespace refused it: the goal's tests still fail, and the held-out ones do not run
        assert held_check(first)["summary"].startswith("held-out tests: not run")
        return
    name, named = NAMED[move]
    check = next(c for c in first["checks"] if c["name"] == name)
    assert not check["passed"] and any(line.startswith(named) for line in check["lines"]), check
    assert named in run.turn_file(1, 2, "prompt.md").read_text()
    if name == "tests":
        return
    held = [e["data"].get("heldout") for e in ws.events(run) if e["type"] == "verify.finished"]
    assert held[0]["evaluations"] == 1 and held[0]["bits"] > 0  # the leakage budget counts the release


def test_with_the_store_gone_a_claim_pauses_the_run_and_the_agent_learns_no_path(workspace):
    from pathlib import Path
    ws, store, _ = held_out(workspace, {"s1t1": [*FIX, CLAIM]})
    (Path(store) / "files").rename(Path(store) / "moved-away")
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    check = held_check(verdicts(ws, run)[-1])
    assert not check["passed"] and check["summary"].startswith("held-out tests: not evaluated: they are unavailable")
    paused = [e["data"] for e in ws.events(run) if e["type"] == "run.paused"]
    assert paused and paused[0]["reason"].startswith("the held-out tests are missing from their store"), paused
    assert store not in run.events.read_text() and outcome(run) != "done"


def test_preflight_fails_held_out_tests_without_a_pytest_command(workspace):
    from nightshift.supervisor.cli.preflight.screen import run_preflight
    ws, _, _ = held_out(workspace, {})
    config = (ws.path / "nightshift.toml").read_text()
    (ws.path / "nightshift.toml").write_text(config.replace(json.dumps(TEST_COMMAND), '"make check"'))
    lines = [line for line in run_preflight(ws.path).lines if line.what == "held-out"]
    assert [(line.status, line.text.split(" (")[0]) for line in lines] == [
        ("FAIL", "held-out tests need a pytest test command")], lines


def test_without_a_namespace_a_run_with_held_out_tests_does_not_start(workspace):
    ws, store, _ = held_out(workspace, {"s1t1": [*FIX, CLAIM]})
    config = (ws.path / "nightshift.toml").read_text() + '\n[policy]\nsandbox = "off"\n'
    (ws.path / "nightshift.toml").write_text(config)
    started = nightshift("run", str(ws.path), "--no-check", cwd=ws.path)
    said = started.stderr.strip()
    assert started.returncode != 0 and "Traceback" not in said and len(said.splitlines()) == 1, said
    assert "cannot be protected here" in said and 'heldout = "unprotected"' in said
    assert not (ws.path / ".nightshift" / "runs").exists() or not list((ws.path / ".nightshift" / "runs").iterdir())


def test_a_link_planted_where_the_held_out_folder_was_never_carries_them_out(workspace):
    """The held-out folder tests/more/ is gone from the workspace; the agent puts a link there to a folder of its
    own (absolute, so it points into the workspace from the checkout too): the held-out tests are written into a
    real folder of the checkout, never through the link, and the honest fix still ends done."""
    (workspace.path / "tests" / "more").mkdir(parents=True)
    write_suite(workspace.path)
    (workspace.path / "tests" / "test_more.py").rename(workspace.path / "tests" / "more" / "test_more.py")
    SUITE_MORE = {"tests/more/test_more.py": TEST_MORE}  # noqa: N806 - the moved file, as the store holds it
    leak = workspace.path / "leak"
    plant = ["shell", f"mkdir -p {leak} && rm -rf tests/more && ln -s {leak} tests/more"]
    init = nightshift("init", str(workspace.path), "--force", "--agent", "command", "--test-command", TEST_COMMAND,
                      "--holdout-tests", "tests/more", "-y", cwd=workspace.path)
    assert init.returncode == 0, init.stderr
    store = tomllib.loads((workspace.path / "nightshift.toml").read_text())["verify"]["heldout_tests"]
    from pathlib import Path
    assert (Path(store) / "files" / "tests" / "more" / "test_more.py").read_text() == SUITE_MORE["tests/more/test_more.py"]
    ws = workspace.configure({"s1t1": [plant, *FIX, CLAIM]}, test_command=TEST_COMMAND, pushbacks=1, max_shifts=1,
                             extra=f"heldout_tests = {json.dumps(store)}\n")
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 0
    assert held_check(verdicts(ws, run)[-1])["summary"] == "held-out tests: pass"
    assert (ws.path / "tests" / "more").is_symlink() and list(leak.iterdir()) == []


@pytest.mark.parametrize("oracle", ["", '\n[oracle]\ncommand = "true"\n'], ids=["tests only", "with an oracle"])
def test_past_the_leakage_budget_nothing_about_them_is_released(workspace, oracle):
    ws, store, _ = held_out(workspace, {"s1t1": [*MOVES["special_case"], CLAIM]})
    config = (ws.path / "nightshift.toml").read_text().replace("heldout_tests = ", "heldout_budget = 1\nheldout_tests = ")
    (ws.path / "nightshift.toml").write_text(config + oracle)  # a plain [oracle]: the tests' budget is still named
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    check = held_check(verdicts(ws, run)[0])
    assert not check["passed"] and check["summary"].startswith("held-out tests: not released"), check
    assert "fewer than half" not in json.dumps(verdicts(ws, run))  # no band reached the agent
    held = verdicts(ws, run)[0]["heldout"]
    assert held["withheld"] and held["bits"] == 0.0
    paused = [e["data"] for e in ws.events(run) if e["type"] == "run.paused"]
    assert paused and "held-out budget spent" in paused[0]["reason"] and "[verify] heldout_budget" in paused[0]["reason"]
    assert outcome(run) != "done"
