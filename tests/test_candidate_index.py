"""The candidate's private index (supervisor/candidate_index.py), read by the judge's diff and the held-out tests'
clean checkout: it holds the working tree's changes, leaves out what a commit never takes at the configured limit,
and never touches the user's own index (their staged and unstaged changes stay as they were, byte for byte).
"""
from __future__ import annotations

import subprocess

from nightshift.supervisor.candidate_index import stage_candidate
from nightshift.supervisor.verify.heldout_checkout import candidate_tree


def git(ws, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws, check=True,
                          capture_output=True, text=True).stdout


def test_the_candidate_holds_the_changes_but_never_the_users_index(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "solver.py").write_text("x = 1\n")
    (ws / "staged.py").write_text("s = 1\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "base")
    (ws / "staged.py").write_text("s = 2\n")
    git(ws, "add", "staged.py")  # the user's own staging, which must stay as it is
    (ws / "solver.py").write_text("x = 2\n")
    (ws / "new.py").write_text("n = 1\n")
    (ws / "big.dat").write_bytes(b"x" * 4096)
    index_before = (ws / ".git" / "index").read_bytes()
    staged_before = git(ws, "diff", "--cached", "--name-only")
    tree = candidate_tree(ws, tmp_path / "private-index", max_bytes=1024)
    listed = git(ws, "ls-tree", "-r", "--name-only", tree).split()
    assert {"solver.py", "staged.py", "new.py"} <= set(listed) and "big.dat" not in listed
    assert git(ws, "show", f"{tree}:solver.py") == "x = 2\n"
    assert (ws / ".git" / "index").read_bytes() == index_before
    assert git(ws, "diff", "--cached", "--name-only") == staged_before == "staged.py\n"
    env = stage_candidate(ws, tmp_path / "again", max_bytes=1 << 20)  # under a larger limit the file is taken
    assert "big.dat" in subprocess.run(["git", "ls-files"], cwd=ws, env={**env, "PATH": "/usr/bin:/bin"},
                                       capture_output=True, text=True).stdout


def test_a_file_the_user_staged_that_no_commit_takes_is_not_the_candidates_either(tmp_path):
    """A giant the user staged before the run: nightshift's commit starts from HEAD and leaves it out, so the tree
    the judge and the held-out tests read leaves it out too (the copied index had kept the staged version)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "solver.py").write_text("x = 1\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "base")
    (ws / "giant.dat").write_bytes(b"x" * 4096)
    git(ws, "add", "giant.dat")
    tree = candidate_tree(ws, tmp_path / "private-index", max_bytes=1024)
    assert "giant.dat" not in git(ws, "ls-tree", "-r", "--name-only", tree).split()
    assert git(ws, "diff", "--cached", "--name-only") == "giant.dat\n"  # the user's staging untouched
