"""Issues 44 and 45, the verdict's tree in parts: it is synced incrementally and only nightshift's state survives
in it, `verify-result --rerun` gets the git the verdict had, reference values stored as binary numbers (or pasted
into the agent's history) are a finding, and an exact match outside a verdict says the git history was in reach.
The whole runs are in test_verdict_tree.py."""
from __future__ import annotations

import sys

import pytest

from tests.test_bit_for_bit import need_bwrap
from tests.test_verdict_tree import REFERENCE


def test_the_tree_is_synced_incrementally_and_only_nightshift_state_survives(tmp_path):
    """Unchanged files keep their mtime; a changed, added or tampered-with file is written anew; a removed one
    goes; a build output stays; the references are never written; the git there has no blob and no history."""
    import os
    import subprocess

    from nightshift.supervisor.verify import verdict_tree

    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "reference").mkdir()
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    for name in ("a.c", "b.c", "c.c"):
        (ws / "src" / name).write_text(f"int {name[0]};\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=ws, check=True)
    subprocess.run([*git, "tag", "v1.0"], cwd=ws, check=True)
    home = tmp_path / "home"
    first = verdict_tree.sync(ws, home, {"reference/result.dat"})
    tree = first.path
    assert first.left_out == ["reference/result.dat"] and not (tree / "reference").exists()
    assert sorted(first.written) == ["src/a.c", "src/b.c", "src/c.c"]
    (tree / "src" / "a.o").write_text("object")  # a build output of nightshift's own command
    before = (tree / "src" / "b.c").stat().st_mtime_ns
    (tree / "src" / "c.c").write_text("int c = 42;\n")  # a command rewrote a tracked file: not the commit's
    (ws / "src" / "a.c").write_text("int a = 1;\n")
    (ws / "src" / "new.c").write_text("int n;\n")
    subprocess.run(["git", "rm", "-q", "src/c.c"], cwd=ws, check=True)
    (ws / "src" / "c.c").write_text("int c;\n")  # back, untracked: the candidate holds it again
    second = verdict_tree.sync(ws, home, {"reference/result.dat"})
    assert sorted(second.written) == ["src/a.c", "src/c.c", "src/new.c"], second.written
    assert (tree / "src" / "b.c").stat().st_mtime_ns == before  # unchanged: make sees nothing to do
    assert (tree / "src" / "c.c").read_text() == "int c;\n" and (tree / "src" / "a.o").read_text() == "object"
    (ws / "src" / "new.c").unlink()
    assert verdict_tree.sync(ws, home, {"reference/result.dat"}).removed == ["src/new.c"]
    assert not (tree / "src" / "new.c").exists()
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}

    def tree_git(*args):
        return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, env=env)
    assert tree_git("describe", "--tags").stdout.strip() == "v1.0"
    assert tree_git("rev-list", "--all").stdout.count("\n") == 1  # one commit, no history
    assert tree_git("cat-file", "--batch-all-objects", "--batch-check").stdout.count(" blob ") == 0
    assert tree_git("show", "HEAD:reference/result.dat").returncode != 0  # listed, its bytes are not there
    from nightshift.supervisor.verify.verdict_references import place_references
    place_references(tree, ws, [(ws / "reference" / "result.dat").resolve()])  # what the tests read
    assert (tree / "reference" / "result.dat").read_text() == REFERENCE
    assert tree_git("status", "--porcelain", "--untracked-files=no").stdout == ""  # clean: `describe --dirty` too


def test_verify_result_rerun_gets_the_same_git_the_verdict_had(tmp_path):
    """A build that embeds `git rev-parse HEAD` writes the same at the verdict and at --rerun: both trees' git is
    the one commit made from the same entries (attest/rerun.py)."""
    import subprocess

    from nightshift.supervisor.attest.findings import Findings
    from nightshift.supervisor.attest.gitnotes import write_tree
    from nightshift.supervisor.attest.rerun import _git_as_in_the_verdict
    from nightshift.supervisor.verify import verdict_tree

    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    (ws / "solver.py").write_text("print(1)\n")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"], cwd=ws, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()
    at_verdict = verdict_tree.sync(ws, tmp_path / "home", {"reference/result.dat"}).path
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write_tree(ws, commit, fresh)
    found = Findings()
    _git_as_in_the_verdict(ws, commit, fresh, found)

    def head(where):
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True).stdout.strip()
    assert head(at_verdict) == head(fresh) and len(head(fresh)) == 40


@pytest.mark.parametrize("how", ["float64-dump", "float32-pickle", "history", "input-mesh"])
def test_reference_values_stored_as_binary_numbers_are_a_finding(tmp_path, how):
    """A raw dump of the answers (struct.pack, tofile), a pickle of float32 values, or such a file committed and
    deleted again: named, with the byte offset, whether or not the match is exact. A binary input mesh whose
    coordinates are the reference's x column (the comparison's x: the solver's input) is no finding."""
    import pickle
    import struct
    import subprocess

    import numpy as np

    from nightshift.supervisor.config.oracle import OracleConfig
    from nightshift.supervisor.verify.oracle.check import run_oracle

    ws = tmp_path / "ws"
    ws.mkdir()
    xs = np.cumsum(np.linspace(0.1, 0.3, 40)) * 1.000123  # a non-uniform grid
    ys = (np.float32 if how == "float32-pickle" else np.float64)(1.0 / (xs + 0.123456789))
    (ws / "reference").mkdir()
    rows = "".join(f"{float(x)!r} {float(y)!r}\n" for x, y in zip(xs, ys))
    (ws / "reference" / "result.dat").write_text("# 1:x 2:y\n" + rows)
    solver = ("import os, numpy as np\nxs = np.cumsum(np.linspace(0.1, 0.3, 40)) * 1.000123\nos.makedirs('out', "
              "exist_ok=True)\nys = (np.float32 if TYPE else np.float64)(1.0 / (xs + 0.123456789))\n"
              "open('out/result.dat', 'w').write('# 1:x 2:y\\n' + ''.join(f'{float(x)!r} {float(y)!r}\\n' "
              "for x, y in zip(xs, ys)))\n").replace("TYPE", str(how == "float32-pickle"))
    (ws / "solver.py").write_text(solver)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=ws, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()
    store = ws / "data" / "cache.bin"
    store.parent.mkdir()
    if how == "float32-pickle":
        store.write_bytes(pickle.dumps({"note": "warm start", "y": ys}))
    elif how == "input-mesh":
        store.write_bytes(b"MESH" + xs.tobytes())
    else:
        store.write_bytes(b"\x00hdr" + struct.pack("40d", *ys) + b"tail")
    if how == "history":
        subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
        subprocess.run([*git, "commit", "-qm", "warm start"], cwd=ws, check=True)
        store.unlink()
        subprocess.run([*git, "commit", "-qam", "taken out"], cwd=ws, check=True)
    cfg = OracleConfig.model_validate({"command": f"{sys.executable} solver.py", "compare": [
        {"name": "result", "candidate": "out/result.dat", "reference": "reference/result.dat", "x": "x",
         "rtol": 1e-6}]})
    outcome = run_oracle(cfg, ws, tmp_path / "out", None, base=base)
    said = " ".join(outcome.report["problems"])
    if how == "input-mesh":
        assert outcome.passed and "binary" not in said, said
        return
    assert not outcome.passed
    where = "data/cache.bin in commit" if how == "history" else "data/cache.bin stores"
    assert where in said and "of a reference's values in a row as binary numbers" in said, said


def test_an_exact_match_outside_a_verdict_says_the_git_history_was_in_reach(tmp_path):
    """`check` and a user's `nightshift compare` run the oracle command in the workspace, where its git history is
    (its namespace hides the reference files, not the history): an exact match there says so, and names the verdict
    as where it is run without one."""
    import subprocess

    from nightshift.supervisor.config.oracle import OracleConfig
    from nightshift.supervisor.verify.oracle.check import run_oracle

    need_bwrap()
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    (ws / "solver.py").write_text("import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write("
                                  "'# 1:x 2:y\\n' + ''.join(f'{n} {1.0 / (n + 0.123456789):.17g}\\n' "
                                  "for n in range(1, 41)))\n")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"], cwd=ws, check=True)
    cfg = OracleConfig.model_validate({"command": f"{sys.executable} solver.py", "compare": [
        {"name": "result", "candidate": "out/result.dat", "reference": "reference/result.dat", "rtol": 1e-9}]})
    outcome = run_oracle(cfg, ws, tmp_path / "out", None)
    assert outcome.passed, outcome.pushback
    said = " ".join(outcome.pushback)
    assert "the workspace's git history in its reach (each verdict runs it in a clean checkout" in said, said
