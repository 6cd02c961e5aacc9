"""Issue 35, wording: a verdict says what is wrong first and names files as the user knows them. A FAIL whose
comparisons pass opens with the finding that fails it (not "all 3 comparisons pass"), and a reader's error names
`out/result.dat`, not the workspace's long absolute path. Scripted command agents, the namespace on.
"""
from __future__ import annotations

from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_namespace import HONEST, REFERENCE, need_namespace, run_until_it_rests

ORACLE = ('\n[oracle]\ncommand = "python3 solver.py"\n'
          '[[oracle.compare]]\nname = "result"\ncandidate = "out/result.dat"\nreference = "reference/result.dat"\n'
          'rtol = 1e-6\n')


def _verdicts(workspace, script) -> list[dict]:
    (workspace.path / "reference").mkdir()
    (workspace.path / "reference" / "result.dat").write_text(REFERENCE)
    workspace.configure({"default": script}, backend="local", pushbacks=0, max_shifts=1, extra=ORACLE)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    return [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]


def test_a_fail_whose_comparisons_pass_opens_with_its_finding(workspace):
    need_namespace()
    paste = ("python3 -c \"rows = open('reference/result.dat').read().splitlines()[1:]; "
             "open('solver_table.py', 'w').write('ANSWERS = [' + ', '.join(r.split()[1] for r in rows) + ']')\"")
    verdicts = _verdicts(workspace, [["write", "solver.py", HONEST], ["shell", paste], ["write", "check.txt", "ok"],
                                     ["claim", "done", "done"]])
    summary = verdicts[-1]["summary"]
    assert not verdicts[-1]["passed"]
    assert summary.startswith("FAIL: oracle: 1 finding fails it: solver_table.py:1 holds 40 of a reference's "
                              "values in a row"), summary
    assert "(the comparisons alone: all 1 within tolerance)" in summary


def test_a_verdict_names_files_by_their_workspace_path(workspace):
    need_namespace()
    broken = "import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write('# 1:x 2:y\\n1 one\\n')\n"
    verdicts = _verdicts(workspace, [["write", "solver.py", broken],
                                     ["write", "check.txt", "ok"], ["claim", "done", "done"]])
    oracle = next(c for c in verdicts[-1]["checks"] if c["name"] == "oracle")
    text = " ".join([oracle["summary"], *oracle["lines"]])
    assert "out/result.dat" in text and str(workspace.path) not in text, text


def test_the_report_says_plainly_that_no_judge_checked_a_run_without_one(workspace):
    need_namespace()
    _verdicts(workspace, [["write", "solver.py", HONEST], ["write", "check.txt", "ok"], ["claim", "done", "done"]])
    run_id = next((workspace.path / ".nightshift" / "runs").iterdir()).name
    report = nightshift("report", run_id, cwd=workspace.path)
    assert ("Judge on the last verdict: none (no [judge] in this run's config): only the oracle and the tests "
            "check the work") in report.stdout, report.stdout
