"""A reference kept in git's stash is a finding for the work tree that stashed it, and only for it: refs/stash is
shared by every worktree of a repository (a fleet's lanes), so another lane's stash is no finding of this lane's,
while a lane's own stash and a plain repository's stash still are."""
from __future__ import annotations

import subprocess
from pathlib import Path

from nightshift.supervisor.verify.oracle.committed import committed_copies
from nightshift.supervisor.verify.oracle.stash import digests

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]


def git(where: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=where, check=True, capture_output=True, text=True).stdout.strip()


def stash_a_copy(where: Path, ref: Path) -> None:
    (where / "cache").mkdir()
    (where / "cache" / "init.dat").write_bytes(ref.read_bytes())
    git(where, "add", "cache/init.dat")
    git(where, "stash", "-q")


def setup(tmp_path: Path) -> tuple[Path, str, list[tuple[str, str]]]:
    repo = tmp_path / "repo"
    (repo / "reference").mkdir(parents=True)
    ref = repo / "reference" / "result.dat"
    ref.write_text("".join(f"{i} {i * 0.123456789:.17g}\n" for i in range(200)))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD"), [("reference/result.dat", digests(ref)[1])]


def test_another_lanes_stash_is_no_finding_of_this_lane(tmp_path):
    repo, base, refs = setup(tmp_path)
    lanes = {name: tmp_path / name for name in ("lane-a", "lane-b")}
    for name, path in lanes.items():
        git(repo, "worktree", "add", "-q", "-b", name, str(path))
    git(lanes["lane-b"], "commit", "-q", "--allow-empty", "-m", "b's own work")  # b's stash sits on b's commit
    stash_a_copy(lanes["lane-b"], repo / "reference" / "result.dat")
    assert committed_copies(lanes["lane-a"], base, refs, set()) == ([], [])
    findings, _ = committed_copies(lanes["lane-b"], base, refs, set())
    assert len(findings) == 1 and findings[0].startswith("cache/init.dat was committed with the bytes of "
                                                         "reference/result.dat"), findings


def test_a_plain_repositorys_stash_is_still_a_finding(tmp_path):
    repo, base, refs = setup(tmp_path)
    stash_a_copy(repo, repo / "reference" / "result.dat")
    findings, _ = committed_copies(repo, base, refs, set())
    assert len(findings) == 1 and "cache/init.dat was committed" in findings[0], findings
