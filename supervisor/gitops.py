"""Git for the supervisor (GitPython): the workspace repository, a commit per stop, diffs since a commit.

`.nightshift/` is never committed: it is listed in .git/info/exclude as well as in .gitignore.

May import: errors.
"""
from __future__ import annotations

from pathlib import Path

import git
from supervisor.errors import UserError

FALLBACK_IDENTITY = ("nightshift", "nightshift@localhost")


class GitError(UserError):
    pass


def open_repo(workspace: Path, create: bool = False) -> git.Repo:
    try:
        return git.Repo(workspace)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        if not create:
            raise GitError(f"{workspace} is not a git repository; run `nightshift init` there") from None
        return git.Repo.init(workspace)


def exclude_state_dir(repo: git.Repo) -> None:
    exclude = Path(repo.git_dir) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text() if exclude.exists() else ""
    if ".nightshift/" not in text.split():
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + ".nightshift/\n")


def _identity_args(repo: git.Repo) -> list[str]:
    reader = repo.config_reader()
    try:
        reader.get_value("user", "email")
        reader.get_value("user", "name")
        return []
    except Exception:  # noqa: BLE001 - any missing piece of identity: use ours
        return ["-c", f"user.name={FALLBACK_IDENTITY[0]}", "-c", f"user.email={FALLBACK_IDENTITY[1]}"]


def head_sha(repo: git.Repo) -> str | None:
    try:
        return repo.head.commit.hexsha
    except ValueError:  # no commit yet
        return None


def commit_all(repo: git.Repo, message: str) -> str | None:
    """Commit everything not ignored; None when there is nothing to commit."""
    exclude_state_dir(repo)
    repo.git.add(A=True)
    if not repo.git.status("--porcelain"):
        return None
    args = _identity_args(repo)
    repo.git.execute(["git", *args, "commit", "-q", "--no-verify", "-m", message])
    return head_sha(repo)


def changed_since(repo: git.Repo, base: str | None, path: str) -> bool:
    """Did ``path`` change between ``base`` and the working tree (committed or not)?"""
    if base is None:
        return (Path(repo.working_tree_dir) / path).exists()
    return bool(repo.git.diff(base, "--", path, name_only=True)) or path in repo.untracked_files


def diff_since(repo: git.Repo, base: str | None) -> str:
    if base is None:
        return repo.git.show("--format=", "HEAD") if head_sha(repo) else ""
    return repo.git.diff(base, "HEAD")
