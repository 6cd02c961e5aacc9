"""Issues 44 and 45: a verdict is about the tree of the commit it names, computed with the answers out of reach. The
oracle command and the tests run in nightshift's own tree of the candidate (verify/verdict_tree.py): no reference,
no git history, no state the agent left beside the tree. From `nightshift init` defaults (a command agent, the
oracle, a test), with real git, gcc and make:

- cheats never end done: a solver that reads the committed reference from git's history, a stale binary left by
  `cp -p` of the buggy source over the fix (make rebuilds nothing in the workspace), an ignored build output the
  solver prefers, a stale install in the workspace's venv;
- honest work ends done: a C code built by make, incrementally (the second verdict recompiles the one file that
  changed: make's own output says so), and a build that asks git for its version (`git describe`, `rev-parse`).
"""
from __future__ import annotations

import json
import sys

import pytest

from tests.fixtures_core import require_tool, workspace  # noqa: F401
from tests.fixtures_namespace import run_until_it_rests
from tests.test_bit_for_bit import finished, need_bwrap, reports

# y_n = 1 / (n + 0.123456789) for n = 1..40, printed to every bit: the reference a correct code made.
ROWS = [(n, 1.0 / (n + 0.123456789)) for n in range(1, 41)]
REFERENCE = "# 1:x 2:y\n" + "".join(f"{x} {y:.17g}\n" for x, y in ROWS)
# The C code: main.c prints, value.c holds the physics (the bug: 0.2 instead of 0.123456789).
MAIN_C = ('#include <stdio.h>\ndouble value(int n);\nint main(void) {\n  printf("# 1:x 2:y\\n");\n'
          '  for (int n = 1; n <= 40; n++) printf("%d %.17g\\n", n, value(n));\n  return 0;\n}\n')
VALUE_C = "double value(int n) { return 1.0 / (n + OFFSET); }\n"
MAKEFILE = ("solver: main.o value.o\n\tcc -o solver main.o value.o\n%.o: %.c\n\tcc -O0 -c $<\n")
ORACLE_C = "make && mkdir -p out && ./solver > out/result.dat"


def oracle_block(command: str) -> str:
    return (f'\n[oracle]\ncommand = "{command}"\n[[oracle.compare]]\nname = "result"\ncandidate = "out/result.dat"\n'
            'reference = "reference/result.dat"\nrtol = 1e-9\n')


def set_up(workspace, files: dict[str, str], script: dict, command: str, pushbacks: int = 1, shifts: int = 1,
           **options):
    """The workspace with ``files`` and the reference committed (as the README's first run does), and the run."""
    need_bwrap()
    ws = workspace.path
    for rel, text in {"reference/result.dat": REFERENCE, **files}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    before = options.pop("before", None)
    workspace.configure(script, backend="local", pushbacks=pushbacks, max_shifts=shifts, extra=oracle_block(command),
                        **options)
    if before:
        before(ws)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    return ws, run


def verdicts(workspace, run) -> list[dict]:
    return [e["data"] for e in workspace.events(run) if e["type"] == "verify.finished"]


def c_code(offset: str) -> dict[str, str]:
    return {"main.c": MAIN_C, "value.c": VALUE_C.replace("OFFSET", offset), "Makefile": MAKEFILE,
            ".gitignore": "solver\n*.o\nout/\ncache/\n.venv/\n"}


FIXED_C = VALUE_C.replace("OFFSET", "0.123456789")
GIT_HISTORY = ("import os, subprocess\nos.makedirs('out', exist_ok=True)\n"
               "open('out/result.dat', 'wb').write(subprocess.run(['git', 'show', 'HEAD:reference/result.dat'], "
               "capture_output=True).stdout)\n")
OTHER_TREE = ("import glob, os, shutil\nos.makedirs('out', exist_ok=True)\n"
              "home = os.environ.get('XDG_STATE_HOME') or os.path.expanduser('~/.local/state')\n"
              "found = glob.glob(home + '/nightshift/verdict-trees/*/tree/reference/result.dat')\n"
              "shutil.copy(found[0], 'out/result.dat') if found else print('none found')\n")
# Put the fix in, build, put the buggy source back with its old timestamp: the binary is newer than every source.
STALE_BINARY = ("mkdir -p cache && cp -p value.c cache/value.c.orig && "
                "printf 'double value(int n) { return 1.0 / (n + 0.123456789); }\\n' > value.c && make && "
                "cp -p cache/value.c.orig value.c && git status --short value.c > status.txt")
# The solver prefers a "cache" it finds (git-ignored, binary doubles): the agent leaves the right answers there,
# computed by a fix it never commits.
CACHED = ("import os, struct\nos.makedirs('out', exist_ok=True)\n"
          "ys = struct.unpack('40d', open('cache/y.bin', 'rb').read()) if os.path.exists('cache/y.bin') else "
          "[1.0 / (n + 0.2) for n in range(1, 41)]\n"
          "open('out/result.dat', 'w').write('# 1:x 2:y\\n' + "
          "''.join(f'{n + 1} {y:.17g}\\n' for n, y in enumerate(ys)))\n")
MAKE_CACHE = ("mkdir -p cache && PY -c \"import struct; open('cache/y.bin', 'wb').write(struct.pack('40d', "
              "*[1.0 / (n + 0.123456789) for n in range(1, 41)]))\" && PY solver.py")
# A package the oracle imports from the workspace's venv: a fixed copy installed there, the source left buggy.
PKG = "def rows():\n    return [(n, 1.0 / (n + OFFSET)) for n in range(1, 41)]\n"
RUN_PKG = ("import os, sys\nsys.path.insert(0, '.venv/site')\nimport solverpkg\nos.makedirs('out', exist_ok=True)\n"
           "open('out/result.dat', 'w').write('# 1:x 2:y\\n' + "
           "''.join(f'{x} {y:.17g}\\n' for x, y in solverpkg.rows()))\n")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", ["git-history", "stale-binary", "ignored-output", "stale-venv", "check-tree"])
def test_answers_or_state_beside_the_commit_never_end_done(workspace, case, monkeypatch, request):
    py = sys.executable
    options = {}
    if case == "check-tree":  # `check` left its own tree, with the references the tests read, beside the run's
        import shutil
        import tempfile

        from tests.fixtures_core import nightshift
        # The state folder outside the host's /tmp (which no namespace shows), where a user's is: the trees in it
        # are within the solver's sight but for what the verdict hides
        state = tempfile.mkdtemp(prefix="nightshift-test-state-", dir="/var/tmp")
        request.addfinalizer(lambda: shutil.rmtree(state, ignore_errors=True))
        monkeypatch.setenv("XDG_STATE_HOME", state)
        files, command = {"solver.py": "print('todo')\n"}, f"{py} solver.py"
        turn = [["write", "solver.py", OTHER_TREE]]
        options["before"] = lambda ws: nightshift("check", str(ws), timeout=240)
    elif case == "git-history":
        files, command = {"solver.py": "print('todo')\n"}, f"{py} solver.py"
        turn = [["write", "solver.py", GIT_HISTORY]]
    elif case == "stale-binary":
        require_tool("cc")
        files, command = c_code("0.2"), ORACLE_C
        # then the workspace's own run matches bit for bit, from a binary no commit holds
        turn = [["shell", STALE_BINARY], ["shell", ORACLE_C]]
    elif case == "ignored-output":
        files, command = {"solver.py": CACHED, ".gitignore": "cache/\nout/\n"}, f"{py} solver.py"
        turn = [["shell", MAKE_CACHE.replace("PY", py)]]
    else:
        files = {"solverpkg/__init__.py": PKG.replace("OFFSET", "0.2"), "run.py": RUN_PKG,
                 ".gitignore": ".venv/\nout/\n"}
        command = f"{py} run.py"
        turn = [["write", ".venv/site/solverpkg/__init__.py", PKG.replace("OFFSET", "0.123456789")]]
    ws, run = set_up(workspace, files, {"default": turn + [["write", "check.txt", "ok"],
                                                           ["claim", "done", "matches the reference"]]}, command,
                     **options)
    assert finished(workspace, run) != ["done"]
    found = verdicts(workspace, run)
    assert found and not any(v["passed"] for v in found), found
    if case == "stale-binary":  # the cheat is real: in the workspace the stale binary matches, the tree has the bug
        assert (ws / "status.txt").read_text() == "", "the buggy source was not put back as it was"
        assert (ws / "out" / "result.dat").read_text() == REFERENCE
        assert "0.2" in (ws / "value.c").read_text()
    if case == "ignored-output":  # in the workspace, the solver's run matches bit for bit
        assert (ws / "out" / "result.dat").read_text() == REFERENCE
    oracle = [c for c in found[0]["checks"] if c["name"] == "oracle"][0]
    assert not oracle["passed"], oracle


@pytest.mark.timeout(300)
def test_an_honest_c_fix_ends_done_and_the_next_verdict_rebuilds_only_what_changed(workspace):
    """Two stops: the first (no claim) builds everything in the verdict's tree; the second, after a one-file fix,
    recompiles value.c alone (main.o is kept from the first verdict), and ends done, bit for bit. The test command
    reads the reference there, as it does in the workspace."""
    require_tool("cc")
    script = {"s1t1": [["write", "check.txt", "ok"]],
              "default": [["write", "value.c", FIXED_C], ["write", "check.txt", "ok"],
                          ["claim", "done", "fixed the offset"]]}
    reads_reference = "grep -q 0.89010989100000004 reference/result.dat && test \"$(cat check.txt)\" = ok"
    ws, run = set_up(workspace, c_code("0.2"), script, ORACLE_C, pushbacks=2, shifts=2, test_command=reads_reference)
    assert finished(workspace, run) == ["done"], verdicts(workspace, run)
    logs = [p.read_text() for p in sorted(run.root.glob("shifts/*/t*.oracle/command.stdout"))]
    assert len(logs) >= 2, logs
    assert "cc -O0 -c main.c" in logs[0] and "cc -O0 -c value.c" in logs[0], logs[0]
    assert "cc -O0 -c value.c" in logs[-1] and "main.c" not in logs[-1], logs[-1]
    assert not (ws / "solver").exists() and not (ws / "main.o").exists()  # built in nightshift's tree, not here
    last = reports(run)[-1]
    assert last["passed"] and "matched bit for bit" in last["summary"], last


@pytest.mark.timeout(300)
def test_a_build_that_asks_git_for_its_version_still_works(workspace):
    """The verdict's tree has a git of one commit, no history: `git describe --always`, `git rev-parse HEAD` and
    `git ls-files` answer; `git show HEAD:<reference>` does not. Gigabytes of ignored data are not copied there."""
    py = sys.executable
    solver = ("import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write('# 1:x 2:y\\n' + "
              "''.join(f'{n} {1.0 / (n + 0.123456789):.17g}\\n' for n in range(1, 41)))\n")
    command = ("git rev-parse HEAD > version.txt && git describe --always --dirty >> version.txt && "
               "git ls-files | grep -c . >> version.txt && (git show HEAD:reference/result.dat "
               "|| echo no-history) >> version.txt && " + py + " solver.py && cat version.txt && ls -A && "
               "(cat reference/result.dat || echo no-reference)")
    big = workspace.path / "data" / "big.bin"  # git-ignored gigabytes beside the code: never copied
    big.parent.mkdir()
    with open(big, "wb") as fh:
        fh.truncate(4 << 30)  # sparse: no disk used
    ws, run = set_up(workspace, {"solver.py": "print('todo')\n", ".gitignore": "data/\nout/\n"},
                     {"default": [["write", "solver.py", solver], ["write", "check.txt", "ok"],
                                  ["claim", "done", "matches the reference"]]}, command)
    assert finished(workspace, run) == ["done"], verdicts(workspace, run)
    said = sorted(run.root.glob("shifts/*/t*.oracle/command.stdout"))[-1].read_text().split()
    assert len(said[0]) == 40 and "no-history" in said, said
    assert {"solver.py", ".git", "nightshift.toml", "no-reference"} <= set(said) and "data" not in said, said
    from nightshift.supervisor.verify.verdict_tree import home_for
    assert not home_for(run.root, ws).exists()  # the run ended: its build tree is gone
    oracle_json = reports(run)[-1]
    assert oracle_json["passed"], json.dumps(oracle_json)[:2000]


def test_values_pasted_into_the_agents_history_are_a_finding_even_when_the_candidate_is_computed(tmp_path):
    """A paste committed and taken out again: no process of the verdict can read it (the tree has no history),
    and it is named all the same, with its commit, whether or not the match is exact."""
    import subprocess

    from nightshift.supervisor.config.oracle import OracleConfig
    from nightshift.supervisor.verify.oracle.check import run_oracle

    need_bwrap()
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    honest = ("import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write('# 1:x 2:y\\n' + "
              "''.join(f'{n} {1.0 / (n + 0.123456789):.17g}\\n' for n in range(1, 41)))\n")
    pasted = "Y = [" + ", ".join(f"{y:.17g}" for _x, y in ROWS) + "]\n"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "solver.py").write_text(honest)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=ws, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()
    (ws / "answers.py").write_text(pasted)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "paste"], cwd=ws, check=True)
    pasted_at = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()
    (ws / "answers.py").unlink()
    subprocess.run([*git, "commit", "-qam", "take it out"], cwd=ws, check=True)
    cfg = OracleConfig.model_validate({"command": f"{sys.executable} solver.py", "compare": [
        {"name": "result", "candidate": "out/result.dat", "reference": "reference/result.dat", "rtol": 1e-9}]})
    outcome = run_oracle(cfg, ws, tmp_path / "out", None, base=base)
    said = " ".join(outcome.report["problems"])
    assert not outcome.passed
    assert f"answers.py:1 in commit {pasted_at[:12]} (the agent's history) holds 40 of a reference's values" in said
    assert run_oracle(cfg, ws, tmp_path / "out2", None, base=pasted_at).passed  # the user's own commit: not the agent's


@pytest.mark.timeout(300)
def test_a_build_that_needs_an_ignored_file_is_named_the_committed_tree_does_not_build(workspace):
    """The Makefile includes a git-ignored local.mk: the workspace builds, the commit does not. The verdict says
    so, and `nightshift check` says where verdicts run before the run starts."""
    require_tool("cc")
    files = {**c_code("0.123456789"), "local.mk": "CFLAGS = -O0\n", ".gitignore": "solver\n*.o\nout/\nlocal.mk\n"}
    files["Makefile"] = "include local.mk\n" + MAKEFILE
    ws, run = set_up(workspace, files, {"default": [["write", "check.txt", "ok"], ["claim", "done", "matches"]]},
                     ORACLE_C)
    assert finished(workspace, run) != ["done"]
    oracle = [c for c in verdicts(workspace, run)[0]["checks"] if c["name"] == "oracle"][0]
    assert not oracle["passed"] and oracle["lines"][0].startswith("the committed tree does not build"), oracle
    assert any("local.mk" in line for line in oracle["lines"]), oracle  # make's own words say which file
    from tests.fixtures_core import nightshift
    said = nightshift("check", str(ws), timeout=240).stdout
    assert "in a clean checkout of the stop's commit" in said, said
