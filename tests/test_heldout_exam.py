"""Issue 22: the held-out exam. A scripted command agent probes a held-out comparison through everything nightshift
tells it (push-backs, `nightshift compare` in its turn, every file it can read under the workspace at each turn,
the orientation prompt) with candidates wrong on purpose at one point; it recovers no held-out value or error more
precisely than the band, the Ladder answers "no better" between improvements, and none of its claims passes.
An honest solver then ends done, and the user's own views show the full figures. The budget and the Ladder hold
across a kill -9 of the supervisor."""
from __future__ import annotations

import json
import math
import re

from tests.fixtures_core import nightshift, supervise, workspace  # noqa: F401
from tests.fixtures_namespace import HELDOUT, HONEST, need_namespace, oracle_block, run_until_it_rests, setup_references
from tests.fixtures_oracle import all_text_under

from nightshift.supervisor.verify.oracle.exam import AT_CLAIM, BANDS, WITHHELD, read_private
from tests.test_tui_actions import until
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen
from nightshift.tui.widgets.oracle_view import OracleView


def probe_solver(x_off: int, factor: float) -> str:
    """The honest solver, but its held-out output is off by ``factor`` at x = ``x_off``: a question about one
    reference value, asked through the oracle's answer."""
    return HONEST + ("rows = open('out/heldout.dat').read().splitlines()\n"
                     f"x, y = rows[{x_off}].split()\nrows[{x_off}] = f'{{x}} {{float(y) * {factor!r}:.10f}}'\n"
                     "open('out/heldout.dat', 'w').write('\\n'.join(rows) + '\\n')\n")


def probe(n: int) -> list:
    """What the agent reads in its turn: nightshift compare, and every file it can read under .nightshift."""
    return [["shell", f"nightshift compare > compare-{n}.txt 2>&1; nightshift compare --json > compare-{n}.json"],
            ["shell", f"find .nightshift -type f -exec cat {{}} + > probe-{n}.txt 2>/dev/null; "
                      f"cat $NIGHTSHIFT_RUN_DIR/shifts/*/t*.prompt.md >> probe-{n}.txt"]]


def heldout_values() -> list[float]:
    return [float(line.split()[1]) for line in HELDOUT.splitlines()[1:]]


def said_to_the_agent(ws) -> str:
    (ws / "out" / "heldout.dat").unlink(missing_ok=True)  # the agent's own output
    return all_text_under(ws)


def assert_nothing_finer_than_the_band(said: str, figures: list[float]) -> None:
    for value in heldout_values():
        for text in (f"{value:.12f}", f"{value:.6g}", f"{value:.5e}", repr(value)):
            assert text not in said, f"held-out value {text} reached the agent"
    for figure in [f for f in figures if f > 0]:  # the errors over tolerance and relative errors the user sees in full
        for text in (f"{figure:.4g}", f"{figure:.6g}", f"{figure:.3e}", repr(figure)):
            assert text not in said, f"held-out figure {text} reached the agent"


def held_lines(verdict: dict) -> list[str]:
    oracle = next(c for c in verdict["checks"] if c["name"] == "oracle")
    return [line for line in oracle["lines"] if line.startswith("held-out")]


async def test_a_probing_agent_learns_only_bands_at_claims_and_an_honest_solver_ends_done(workspace, tmp_path):
    need_namespace()
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    script = {"s1t1": [["write", "solver.py", probe_solver(7, 1 + 3.1234e-5)], *probe(1), ["claim", "done", "a"]],
              "s1t2": [["write", "solver.py", probe_solver(7, 1 + 4.4321e-6)], *probe(2), ["claim", "done", "b"]],
              "s1t3": [["write", "solver.py", probe_solver(9, 1 + 2.7777e-5)], *probe(3), ["claim", "done", "c"]],
              "s1t4": [["write", "solver.py", probe_solver(9, 1 + 2.7777e-5)], *probe(4)],  # a stop, no claim
              "default": [["write", "solver.py", HONEST], ["claim", "done", "honest"]]}
    workspace.configure(script, backend="local", pushbacks=6, max_shifts=1, test_command="true",
                        extra=oracle_block(str(held)))
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    verdicts = [e for e in workspace.events(run) if e["type"] == "verify.finished"]
    words = [held_lines(v["data"]) for v in verdicts]
    assert words[:5] == [[f"held-out held: {BANDS[2]}"], [f"held-out held: {BANDS[1]}"],
                         ["held-out held: fails, no better than your best so far (within 10x its tolerance)"],
                         [], []], words  # the stop without a claim: nothing about it, not even pass/fail
    assert all(not v["data"]["passed"] for v in verdicts[:3])
    assert "1 held-out: " + AT_CLAIM in verdicts[3]["data"]["summary"]
    finished = [e["data"] for e in workspace.events(run) if e["type"] == "run.finished"]
    assert finished and finished[-1]["outcome"] == "done" and verdicts[4]["data"]["claimed"] == "done"
    # in its turn, nightshift compare says the held-out comparison waits for a claim
    assert AT_CLAIM in (ws / "compare-1.txt").read_text()
    told = json.loads((ws / "compare-2.json").read_text())
    assert [e for e in told["comparisons"] if e["name"] == "held"] == \
        [{"name": "held", "heldout": True, "result": AT_CLAIM, "passed": None}]
    # the run's account: 4 claims released 2 + log2(3) + 1 + 1 bits
    state = json.loads(nightshift("status", run.run_id, "--json", cwd=ws).stdout)["state"]
    assert state["heldout"]["evaluations"] == 4
    assert math.isclose(state["heldout"]["bits"], 2 + math.log2(3) + 1 + 1, rel_tol=1e-4)
    # the user's own figures exist in full, and none of them, nor any held-out value, reached the agent
    private = [read_private(run.root, 1, t) for t in range(1, 6)]
    figures = [float(c[k]) for p in private if p for e in p["comparisons"] for c in e["columns"]
               for k in ("ratio", "rel_worst", "max_rel", "max_abs")]
    assert any(25 < f < 40 for f in figures)  # the probe's error over tolerance, kept for the user
    # a report written inside the workspace while the run goes on ([notify] report = true does) leaves them out
    inside = nightshift("report", run.run_id, "-o", str(run.root / "report.html"), cwd=ws)
    assert inside.returncode == 0 and "held-out figures are left out of this copy" in inside.stdout
    assert_nothing_finer_than_the_band(said_to_the_agent(ws), figures)
    # the user's views: status, log, report, TUI show the held-out figures at full precision
    report = nightshift("report", run.run_id, cwd=ws)
    where = re.search(r"report of run \S+: (\S+)", report.stdout).group(1)
    assert not where.startswith(str(ws)) and "held-out held: pass: worst y at row" in report.stdout
    assert "held-out held: pass: worst y" in open(where).read()
    status = nightshift("status", run.run_id, cwd=ws).stdout
    assert "held-out: 4 evaluations, at most 5.58 bits released" in status
    log = nightshift("log", run.run_id, cwd=ws).stdout
    assert re.search(r"held-out held: FAIL: worst y at row \d+: rel err [0-9.e-]+, 31\.\d{3,}x the tolerance", log), log
    app = make_app(live=False, runs=[run], open_run=run.run_id)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        await pilot.press("4")
        view = app.screen.query_one(OracleView)
        table = view.query_one("#oracle-table")
        await until(pilot, lambda: table.row_count == 2)  # the visible and the held-out table, by their worst column
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(2)]
        held_y = next(r for r in rows if r[1:3] == ["held", "y (worst of 2)"])
        assert held_y[0] == "pass" and held_y[3].endswith("e-10")  # its max rel, which the agent never saw
        head = str(view.query_one("#oracle-head").render())
        assert "held-out: 4 evaluations, at most 5.58 bits released" in head


def test_the_budget_and_the_ladder_hold_across_a_kill_9_of_the_supervisor(workspace, tmp_path):
    need_namespace()
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    script = {"s1t1": [["write", "solver.py", probe_solver(7, 1 + 4.4321e-6)], ["claim", "done", "a"]],
              "s1t2": [["write", "solver.py", probe_solver(7, 1 + 3.1234e-5)], ["claim", "done", "b"]],
              "default": [["write", "solver.py", probe_solver(8, 1 + 5.5e-3)], ["claim", "done", "c"]]}
    workspace.configure(script, backend="local", pushbacks=6, max_shifts=1, test_command="true",
                        extra=oracle_block(str(held)).replace("[oracle]\n", "[oracle]\nheldout_budget = 3.5\n"))
    run = workspace.create_run()
    killed = supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "verify.finished"})
    assert killed.returncode == -9 and workspace.types(run).count("verify.finished") == 1
    run_until_it_rests(workspace, run)
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    # after the kill: the Ladder remembers the best band (within 10x), so a worse answer releases nothing new
    assert [held_lines(v) for v in verdicts[:2]] == [
        [f"held-out held: {BANDS[1]}"], ["held-out held: fails, no better than your best so far (within 10x its "
                                         "tolerance)"]]
    # 2 + 1 bits spent of 3.5: the third claim would cost 1 more, so it is answered with nothing and the run
    # waits for a person instead of telling the agent
    assert held_lines(verdicts[2]) == [] and f"1 held-out: {WITHHELD}" in verdicts[2]["summary"]
    assert [e["data"]["what"] for e in workspace.events(run) if e["type"] == "budget.exceeded"] == ["heldout_budget"]
    state = json.loads(nightshift("status", run.run_id, "--json", cwd=ws).stdout)["state"]
    assert state["heldout"] == {"evaluations": 2, "bits": 3.0, "best": {"held": 1}, "withheld": 1}
    assert not any(e["type"] == "run.finished" and e["data"]["outcome"] == "done" for e in workspace.events(run))


def test_a_heldout_reference_that_vanished_holds_the_run_with_one_line_naming_the_fix(workspace, tmp_path):
    need_namespace()
    ws = workspace.path
    held = setup_references(ws, tmp_path)
    workspace.configure({"default": [["write", "solver.py", HONEST], ["claim", "done", "honest"]]}, backend="local",
                        max_shifts=1, test_command="true", extra=oracle_block(str(held)))
    run = workspace.create_run()
    killed = supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "shift.started"})  # the store holds its copy now
    assert killed.returncode == -9
    from nightshift.supervisor.run.paths import heldout_store
    copies = list(heldout_store(run.references).glob("*-heldout-*.dat"))
    assert copies
    for path in [held, *copies]:
        path.unlink()
    run_until_it_rests(workspace, run)
    paused = [e["data"] for e in workspace.events(run) if e["type"] == "run.paused"]
    assert paused and paused[0]["kind"] == "heldout", paused
    assert "\n" not in paused[0]["reason"] and f"put the original file back at {held}" in paused[0]["reason"]
    assert not any(e["type"] == "run.finished" and e["data"]["outcome"] == "done" for e in workspace.events(run))
