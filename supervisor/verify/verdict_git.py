"""The verdict's tree's git: a fresh repository of one commit whose tree lists the candidate's paths and blob ids
without a single blob (verdict_tree.py). A build's `git describe --always`, `git rev-parse HEAD`, `git ls-files`
answer, with the workspace's nearest tag; nothing of the repository's history, stash, reflog, other branches or
packs is there to read. Its id depends on the entries alone, so `verify-result --rerun` (attest/rerun.py) makes the
same one for the same commit. Kept between verdicts while it lists the same tree and nothing rewrote it.

Git runs with nightshift's own environment (gitguard.safe_env) and a config nightshift wrote; in the workspace,
only through gitguard.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from nightshift.supervisor.gitguard import git_dirs, run_git, safe_env

GIT_STAMP = "git.json"  # the tree the .git there lists, and the stat of its files then (git_kept)
IDENTITY = {"GIT_AUTHOR_NAME": "nightshift", "GIT_AUTHOR_EMAIL": "nightshift@localhost",
            "GIT_COMMITTER_NAME": "nightshift", "GIT_COMMITTER_EMAIL": "nightshift@localhost",
            "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}


class GitProblem(Exception):
    pass


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return [st.st_ino, st.st_ctime_ns]


def _tagged(workspace: Path) -> bool:
    """Does the repository have a tag at all (its files read: no git process for the usual answer, no)?"""
    try:
        common = git_dirs(workspace)[1]
        packed = common / "packed-refs"
        return any((common / "refs" / "tags").iterdir()) or (packed.is_file() and b" refs/tags/" in packed.read_bytes())
    except OSError:
        return True  # not readable as files: ask git


def git_without_history(workspace: Path, root: Path, entries: dict[str, tuple[str, str]],
                        near: str = "HEAD") -> str | None:
    """A fresh ``.git`` in ``root`` of one commit listing ``entries`` (no blob, no history; its id depends on the
    entries alone, so `verify-result --rerun` makes the same one); the nearest tag of ``near`` in the workspace
    named on it. Returns why it could not be made, or None."""
    dotgit = root / ".git"
    if dotgit.is_dir() and not dotgit.is_symlink():  # made afresh: nothing a command left in it is kept
        shutil.rmtree(dotgit)
    elif dotgit.exists() or dotgit.is_symlink():
        dotgit.unlink()
    env = {**safe_env(root), "GIT_DIR": str(dotgit), "GIT_WORK_TREE": str(root), **IDENTITY}
    env.pop("GIT_INDEX_FILE", None)

    def git(*args: str, stdin: bytes | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True, timeout=300)
        if proc.returncode:
            said = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GitProblem(f"git {args[0]}: {said[-1] if said else proc.returncode}")
        return proc.stdout.decode().strip()
    try:
        for folder in ("objects", "refs/heads", "refs/tags"):  # a repository by hand: one git process less
            (dotgit / folder).mkdir(parents=True)
        (dotgit / "HEAD").write_text("ref: refs/heads/main\n")
        (dotgit / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        info = b"".join(f"{m} {s}\t".encode() + p.encode("utf-8", "surrogateescape") + b"\0"
                        for p, (m, s) in sorted(entries.items()))
        git("update-index", "--add", "-z", "--index-info", stdin=info)
        commit = git("commit-tree", git("write-tree", "--missing-ok"), "-m", "the verdict's tree (no history)")
        (dotgit / "refs" / "heads" / "main").write_text(commit + "\n")
        tag = run_git(workspace, "describe", "--tags", "--abbrev=0", near).stdout.strip() if _tagged(workspace) else ""
        if tag and run_git(workspace, "check-ref-format", f"refs/tags/{tag}").returncode == 0:
            git("update-ref", f"refs/tags/{tag}", commit)
    except (GitProblem, OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(dotgit, ignore_errors=True)
        return f"no git repository in the verdict's tree ({exc}): a build that asks git for its version gets none"
    return None


def _git_stamp(root: Path, tree: str) -> dict:
    dotgit = root / ".git"
    try:
        head, ref = (dotgit / "HEAD").read_text(), (dotgit / "refs" / "heads" / "main").read_text()
    except OSError:
        head, ref = "", ""
    return {"tree": tree, "head": head, "ref": ref, "index": _stat(dotgit / "index"), "dir": _stat(dotgit)}


def git_kept(home: Path, root: Path, tree: str) -> bool:
    """The git made at the last verdict lists this same tree, and nothing rewrote its index, HEAD or ref since:
    kept (no git process; nightshift runs none in it afterwards)."""
    try:
        return json.loads((home / GIT_STAMP).read_text()) == _git_stamp(root, tree)
    except (OSError, ValueError):
        return False


def remember_git(home: Path, root: Path, tree: str) -> None:
    (home / GIT_STAMP).write_text(json.dumps(_git_stamp(root, tree)))
