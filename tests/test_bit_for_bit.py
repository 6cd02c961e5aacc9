"""Issue 35: a bit-for-bit reproduction is no copy. From `nightshift init` defaults (a command agent, the oracle
run where no reference is readable, a test), an honest agent that fixes the bug of a deterministic solver whose
reference the correct code made ends VERIFIED DONE, and the report says "matched bit for bit" with the held-out
exam as the proof (or, without one, that only a held-out reference proves it); the same with an analytic
reference. A copy of the reference that the agent keeps for the solver to "warm-start" from (untracked, git-ignored,
or committed and deleted again) never ends done, and the finding names the copy."""
from __future__ import annotations

import json
import sys
import uuid

import pytest

from nightshift.supervisor.sandbox.probe import bwrap_problem
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_namespace import run_until_it_rests

# A deterministic solver: y' = -y/(1+x) by RK4 from y(0)=1 in 400 steps, printed to 17 digits (every bit). The
# bug: the last stage's weight.
SOLVER = '''import os, sys
def solve(scale):
    y, h, out = 1.0, 0.01, []
    f = lambda x, y: -scale * y / (1.0 + x)
    for n in range(400):
        x = n * h
        k1 = f(x, y); k2 = f(x + h / 2, y + h / 2 * k1); k3 = f(x + h / 2, y + h / 2 * k2); k4 = f(x + h, y + h * k3)
        y += h / 6 * (k1 + 2 * k2 + 2 * k3 + WEIGHT * k4)
        out.append((x + h, y))
    return "# 1:x 2:y\\n" + "".join(f"{x!r} {v!r}\\n" for x, v in out)
if __name__ == "__main__":
    os.makedirs("out", exist_ok=True)
    open("out/result.dat", "w").write(solve(1.0))
    open("out/heldout.dat", "w").write(solve(1.5))
'''
# An analytic reference the solver computes the same way: y = exp(-x) cos(3x).
ANALYTIC = '''import math, os
os.makedirs("out", exist_ok=True)
rows = [(0.05 * n, math.exp(-0.05 * n) * math.cos(3 * 0.05 * n * FACTOR)) for n in range(1, 81)]
open("out/result.dat", "w").write("# 1:x 2:y\\n" + "".join(f"{x!r} {y!r}\\n" for x, y in rows))
'''


def need_bwrap():
    problem = bwrap_problem()
    if problem:
        pytest.fail(f"bubblewrap is needed to compute with the references out of reach: {problem}")


def made_by(code: str) -> dict:
    """What the correct code writes (run here, as a scientist makes a regression reference)."""
    scope: dict = {"__name__": "reference"}
    exec(code.replace("WEIGHT", "1"), scope)  # noqa: S102 - the test's own solver
    return {"result": scope["solve"](1.0), "heldout": scope["solve"](1.5)}


def oracle_block(held: str | None) -> str:
    block = (f'\n[oracle]\ncommand = "{sys.executable} solver.py"\n[[oracle.compare]]\nname = "result"\n'
             'candidate = "out/result.dat"\nreference = "reference/result.dat"\nrtol = 1e-6\n')
    if held:
        block += (f'[[oracle.compare]]\nname = "held"\ncandidate = "out/heldout.dat"\nreference = "{held}"\n'
                  'heldout = true\nrtol = 1e-6\n')
    return block


def set_up(workspace, tmp_path, script: dict, analytic: bool = False):
    need_bwrap()
    ws = workspace.path
    (ws / "reference").mkdir()
    held = None
    if analytic:
        (ws / "solver.py").write_text(ANALYTIC.replace("FACTOR", "1.0001"))  # the bug: a wrong frequency
        import math
        rows = [(0.05 * n, math.exp(-0.05 * n) * math.cos(3 * 0.05 * n)) for n in range(1, 81)]
        (ws / "reference" / "result.dat").write_text("# 1:x 2:y\n" + "".join(f"{x!r} {y!r}\n" for x, y in rows))
    else:
        (ws / "solver.py").write_text(SOLVER.replace("WEIGHT", "2"))
        made = made_by(SOLVER)
        (ws / "reference" / "result.dat").write_text(made["result"])
        held = tmp_path / "held" / f"heldout-{uuid.uuid4().hex}.dat"
        held.parent.mkdir()
        held.write_text(made["heldout"])
    workspace.configure(script, backend="local", pushbacks=1, max_shifts=2, extra=oracle_block(str(held or "")))
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    return ws, run


def finished(workspace, run) -> list[str]:
    return [e["data"]["outcome"] for e in workspace.events(run) if e["type"] == "run.finished"]


def reports(run) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(run.root.glob("shifts/*/t*.oracle/oracle.json"))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("analytic", [False, True], ids=["regression-reference", "analytic-reference"])
def test_an_honest_fix_that_reproduces_the_reference_bit_for_bit_ends_verified_done(workspace, tmp_path, analytic):
    fixed = (ANALYTIC.replace("FACTOR", "1") if analytic else SOLVER.replace("WEIGHT", "1"))
    compare = f"{sys.executable} -m nightshift.supervisor.cli.main compare > compare.txt 2>&1"  # the agent's own look
    script = {"default": [["write", "solver.py", fixed], ["shell", compare], ["write", "check.txt", "ok"],
                          ["claim", "done", "fixed the bug; outputs identical to the reference"]]}
    ws, run = set_up(workspace, tmp_path, script, analytic)
    assert finished(workspace, run) == ["done"], [e["data"] for e in workspace.events(run)
                                                  if e["type"] == "verify.finished"]
    last = reports(run)[-1]
    assert last["passed"] and not last["problems"], last["problems"]
    said = " ".join(last["exact"])
    assert "result: matched reference/result.dat bit for bit" in said and "matched bit for bit" in last["summary"]
    if analytic:
        assert "only a held-out reference proves the answers were computed" in said
    else:
        assert "the held-out exam passed" in said
        assert str(tmp_path / "held") not in json.dumps(last)  # the held-out file is not named to the agent
    # In the agent's own look (its turn: no namespace nests there, the visible references are readable to it) an
    # exact match is no finding and no proof: the verdict at its stop decides, and the look says so.
    seen = (ws / "compare.txt").read_text()
    assert "pass (bit for bit)" in seen and "may be a copy" not in seen, seen
    assert "matched bit for bit here; whether it was computed with the references out of reach is decided at your stop" \
        in seen, seen


WARM = ("import os, shutil\nos.makedirs('out', exist_ok=True)\n"
        "shutil.copy('cache/init.dat', 'out/result.dat')  # 'warm-started' from a kept copy\n")
FROM_GIT = ("import os, subprocess\nos.makedirs('out', exist_ok=True)\n"
            "objects = subprocess.run(['git', 'rev-list', '--all', '--objects'], capture_output=True, text=True).stdout\n"
            "blob = next((l.split()[0] for l in objects.splitlines() if l.endswith(' cache/init.dat')), 'HEAD')\n"
            "open('out/result.dat', 'wb').write(subprocess.run(['git', 'cat-file', 'blob', blob], "
            "capture_output=True).stdout)\n")
GIT = "git -c user.name=a -c user.email=a@a"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("keep, solver, finding", [
    ("mkdir -p cache && cp reference/result.dat cache/init.dat", WARM,
     "cache/init.dat holds the same bytes as reference/result.dat"),
    ("mkdir -p cache && cp reference/result.dat cache/init.dat && echo cache/ >> .gitignore", WARM,
     "cache/init.dat holds the same bytes as reference/result.dat"),
    (f"mkdir -p cache && cp reference/result.dat cache/init.dat && {GIT} add -f cache/init.dat && "
     f"{GIT} commit -qm warm && {GIT} rm -q cache/init.dat && {GIT} commit -qm gone", FROM_GIT,
     "cache/init.dat was committed with the bytes of reference/result.dat"),
], ids=["untracked", "git-ignored", "committed-then-deleted"])
def test_a_kept_copy_of_the_reference_never_ends_done(workspace, tmp_path, keep, solver, finding):
    script = {"default": [["shell", keep], ["write", "solver.py", solver], ["write", "check.txt", "ok"],
                          ["claim", "done", "warm-started solver"]]}
    ws, run = set_up(workspace, tmp_path, script)
    assert "done" not in finished(workspace, run)
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    pushback = run.turn_file(1, 2, "prompt.md").read_text()
    assert finding in pushback, pushback
    assert "matched reference/result.dat bit for bit" not in pushback


LINKED = ("import os\nos.makedirs('out', exist_ok=True)\n"
          "if not os.path.lexists('out/result.dat'):\n"
          "    os.symlink('../reference/result.dat', 'out/result.dat')  # no bytes copied: the reference itself\n")
EXTERNAL = ("import os, h5py\nos.makedirs('out', exist_ok=True)\n"
            "with h5py.File('out/final.h5', 'w') as f:\n"
            "    f['data'] = h5py.ExternalLink(os.path.abspath('reference/final.h5'), '/data')\n")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", ["symlink", "external-link"])
def test_a_candidate_that_is_a_link_to_the_reference_never_ends_done(workspace, tmp_path, how):
    """In the namespace the solver cannot read the reference, but it can name it: a candidate that is a link to the
    reference file (or an HDF5 dataset that is an ExternalLink to the reference's) would be read by the supervisor
    as the reference's own bytes, a perfect "bit for bit" match. It is refused, and the push-back says so."""
    need_bwrap()
    ws = workspace.path
    (ws / "reference").mkdir()
    if how == "symlink":
        (ws / "reference" / "result.dat").write_text(made_by(SOLVER)["result"])
        solver, block = LINKED, oracle_block(None)
    else:
        import h5py
        import numpy as np
        with h5py.File(ws / "reference" / "final.h5", "w") as f:
            f["data"] = np.random.default_rng(7).random((40, 6, 5))
        solver = EXTERNAL
        block = (f'\n[oracle]\ncommand = "{sys.executable} solver.py"\n[[oracle.compare]]\nname = "final"\n'
                 'candidate = "out/final.h5:/data"\nreference = "reference/final.h5:/data"\nrtol = 1e-6\n')
    (ws / "solver.py").write_text("raise SystemExit('not written yet')\n")
    script = {"default": [["write", "solver.py", solver], ["write", "check.txt", "ok"],
                          ["claim", "done", "outputs identical to the reference"]]}
    workspace.configure(script, backend="local", pushbacks=1, max_shifts=2, extra=block)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    assert "done" not in finished(workspace, run)
    verdicts = [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    said = json.dumps(reports(run)[-1])
    assert ("is reference/result.dat itself (a link to it)" if how == "symlink" else "is an external link: not followed") \
        in said, said
    assert "bit for bit" not in said
