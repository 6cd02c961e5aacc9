"""Git for the supervisor (GitPython): the workspace repository, a commit per stop, diffs since a commit.

`.nightshift/` is never committed: it is listed in .git/info/exclude as well as in .gitignore.

The user's own state is respected: what was dirty or untracked when a run began is recorded (``worktree_state``)
and a commit takes only the paths that changed since (``commit_changes``), never files with conflict markers;
a repository in the middle of a merge, or on a detached HEAD, is refused at `nightshift run` (``refusal``).

Every git process started here runs guarded (supervisor/gitguard.py): no hook, filter, textconv, pager, editor,
signing or credential program the repository names is run, and each call has a deadline. A path whose attributes
name a filter driver is never committed by nightshift (its clean filter does not run here): it is named instead.

May import: errors, gitguard, commit_refusals.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

import git
from nightshift.supervisor import gitguard
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES, gitlinks_added, refused_paths
from nightshift.supervisor.errors import UserError

FALLBACK_IDENTITY = ("nightshift", "nightshift@localhost")


class GitError(UserError):
    pass


class GuardedGit(git.Git):
    """GitPython's command runner with a deadline on every call (a git that hangs never holds a verdict); a git that
    hashes the workspace's files dies with the process that started it (gitguard.dies_with_us)."""

    def execute(self, command, *args, **kwargs):
        if not kwargs.get("as_process"):
            kwargs.setdefault("kill_after_timeout", gitguard.GIT_TIMEOUT)
        if isinstance(command, (list, tuple)):
            kwargs.setdefault("preexec_fn", gitguard.dies_with_us(command))
        return super().execute(command, *args, **kwargs)


class GuardedRepo(git.Repo):
    GitCommandWrapperType = GuardedGit


def open_repo(workspace: Path, create: bool = False) -> git.Repo:
    gitguard.scrub_environ()
    try:
        # expand_vars=False: a folder literally named `$HOME` is a path, not a variable to expand. Its command
        # runner (git.Git) expands its working dir regardless, so it is set back to the literal path.
        repo = GuardedRepo(workspace, expand_vars=False)
        if repo.working_tree_dir:
            repo.git._working_dir = repo.working_tree_dir
        guard(repo)
        return repo
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        if not create:
            raise GitError(f"{workspace} is not a git repository; run `nightshift init` there") from None
        # git itself, not Repo.init: GitPython reopens the new repository with its path's variables expanded.
        gitguard.run_git(Path(workspace), "init", "-q", str(workspace), check=True)
        return open_repo(workspace)


def guard(repo: git.Repo) -> git.Repo:
    """(Re)apply the guard's environment: the drivers the config defines now are switched off too."""
    repo.git.update_environment(**gitguard.safe_env(Path(repo.working_tree_dir or repo.git_dir)))
    return repo


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


def tree_changed(repo: git.Repo, before: str | None, after: str | None) -> bool:
    """Do the trees of two commits differ (an empty commit, or none, changes nothing)?"""
    if before == after:
        return False
    if before is None or after is None:
        return True
    try:  # one guarded git call (GitPython's object database would keep cat-file processes with no deadline)
        trees = repo.git.rev_parse(f"{before}^{{tree}}", f"{after}^{{tree}}").split()
    except git.GitCommandError:  # a commit gone (history rewritten): count it as a change
        return True
    return trees[0] != trees[1]


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
        return os.path.lexists(Path(repo.working_tree_dir) / path)
    return (bool(repo.git.diff(*gitguard.NO_DIFF_PROGRAMS, base, "--", path, name_only=True))
            or path in repo.untracked_files)


def diff_since(repo: git.Repo, base: str | None) -> str:
    guard(repo)
    if base is None:
        return repo.git.show(*gitguard.NO_DIFF_PROGRAMS, "--format=", "HEAD") if head_sha(repo) else ""
    return repo.git.diff(*gitguard.NO_DIFF_PROGRAMS, base, "HEAD")


# ----- the user's state before a run, and commits that leave it alone ---------------------------------
CONFLICT_START = re.compile(rb"^<{7}(?: |$)", re.M)
CONFLICT_END = re.compile(rb"^>{7}(?: |$)", re.M)


def branch_name(repo: git.Repo) -> str | None:
    try:
        return repo.active_branch.name
    except (TypeError, ValueError):  # detached, or no commit yet
        return None


def refusal(repo: git.Repo, workspace: Path) -> str | None:
    """Why a run must not start in this repository (an unresolved merge, a detached HEAD), or None."""
    unmerged = sorted({line.split("\t", 1)[-1] for line in repo.git.ls_files("-u").splitlines() if line})
    git_dir = Path(repo.git_dir)
    if unmerged or any((git_dir / name).exists() for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD")):
        named = f" ({len(unmerged)} conflicted, e.g. {unmerged[0]})" if unmerged else ""
        return (f"{workspace} has an unresolved merge{named}; resolve and commit it, or `git merge --abort`, "
                f"then `nightshift run`")
    if head_sha(repo) and repo.head.is_detached:
        return (f"{workspace} is on a detached HEAD (at {head_sha(repo)[:10]}): commits would be made off any "
                f"branch; `git switch -c nightshift-work` (or check out a branch), then `nightshift run`")
    return None


def _changed_paths(repo: git.Repo, only: list[str] | None = None) -> list[str]:
    """Every path git reports as modified, staged, deleted, renamed or untracked (ignored files never); with
    ``only``, among those paths alone (git then looks at nothing else of the tree)."""
    spec = ["--", *(f":(literal){p}" for p in only)] if only else []
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", *spec, strip_newline_in_stdout=False)
    fields, paths, i = out.split("\0"), [], 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename or copy names its source in the next field
            paths.append(fields[i])
            i += 1
    return [p for p in dict.fromkeys(paths) if not p.startswith(".nightshift/")]


def _content_id(root: Path, path: str) -> str:
    full = root / path
    try:
        if full.is_symlink():
            return "link:" + os.readlink(full)
        if full.is_dir():
            return "dir"
        with open(full, "rb") as fh:
            return hashlib.sha1(fh.read()).hexdigest()
    except FileNotFoundError:
        return "deleted"
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def worktree_changes(repo: git.Repo, only: list[str] | None = None) -> list[str]:
    """Paths that differ from HEAD now (modified, staged, deleted, untracked), among ``only`` when given."""
    return _changed_paths(repo, only)


def never_committed(repo: git.Repo, paths: list[str], max_bytes: int = MAX_COMMIT_BYTES) -> tuple[set[str], dict]:
    """(paths a filter driver would rewrite, {kind: paths} commit_refusals refuses): what no commit of ours takes."""
    filtered = _filtered(repo, paths)
    return filtered, refused_paths(Path(repo.working_tree_dir), [p for p in paths if p not in filtered], max_bytes)


def worktree_state(repo: git.Repo) -> dict[str, str]:
    """{path: content id} of every dirty or untracked path now: what a run must not commit unless it changes."""
    root = Path(repo.working_tree_dir)
    return {path: _content_id(root, path) for path in _changed_paths(repo)}


def has_conflict_markers(path: Path) -> bool:
    try:  # a file only, reached without leaving its folder: never a FIFO, never through a link
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return False
            blob = fh.read(8 << 20)
    except OSError:
        return False
    return bool(CONFLICT_START.search(blob) and CONFLICT_END.search(blob))


def commit_changes(repo: git.Repo, message: str, before: dict[str, str] | None = None,
                   max_bytes: int = MAX_COMMIT_BYTES, run_base: str | None = None) -> tuple[str | None, dict]:
    """Commit the paths that changed since ``before`` (the state when the run began), and only those: the
    user's staged or untracked files that the agent did not touch stay as they were, staged or not. Files
    with conflict markers are never committed. Returns (sha or None, {"kept_out": [...], "conflicts": [...]})."""
    exclude_state_dir(repo)
    guard(repo)
    before = before or {}
    root = Path(repo.working_tree_dir)
    kept_out, conflicts, paths = [], [], []
    for path in _changed_paths(repo):
        if path in before and before[path] == _content_id(root, path):
            kept_out.append(path)
        elif has_conflict_markers(root / path):
            conflicts.append(path)
        else:
            paths.append(path)
    filtered, refused = never_committed(repo, paths, max_bytes)  # filter drivers; links out, giants, repos
    links = gitlinks_added(root, run_base)  # the agent's own `git add` of a repository: taken out of the index
    if links:
        refused["nested_repo"] = sorted(set(refused.get("nested_repo", [])) | set(links))
    never = filtered | {p for names in refused.values() for p in names}
    paths = [p for p in paths if p not in never] + links
    left = {"kept_out": kept_out, "conflicts": conflicts, "filtered": sorted(filtered), "refused": refused}
    if not paths:
        return None, left
    return commit_only(repo, paths, message), left


def commit_only(repo: git.Repo, paths: list[str], message: str) -> str | None:
    """Commit ``paths`` as they are in the working tree, and nothing else; None when that changes no tree."""
    root = Path(repo.working_tree_dir)
    # The real index first (it fails early on a stale lock): these paths staged as they are now, the user's
    # other staged entries untouched. Then the commit is built in a private index from HEAD plus these paths
    # only, so nothing else the user staged goes into it (what `git commit --only` does, which cannot take a
    # file that became a directory).
    _stage(repo, root, paths, {})
    private = {"GIT_INDEX_FILE": str(Path(repo.git_dir) / "nightshift-index")}
    parent = head_sha(repo)
    repo.git.execute(["git", "read-tree", *([parent] if parent else ["--empty"])], env=private)
    _stage(repo, root, paths, private)
    tree = repo.git.execute(["git", "write-tree"], env=private).strip()
    if parent and tree == repo.git.rev_parse(f"{parent}^{{tree}}"):
        return None
    sha = repo.git.execute(["git", *_identity_args(repo), "commit-tree", tree, *(["-p", parent] if parent else []),
                            "-m", message]).strip()
    repo.git.execute(["git", "update-ref", "-m", "nightshift: commit", "HEAD", sha, *([parent] if parent else [])])
    return sha


def _filtered(repo: git.Repo, paths: list[str]) -> set[str]:
    """The paths whose attributes name a filter driver the config defines (e.g. Git LFS): staging them without its
    clean filter would commit other bytes than the user's own git would, so nightshift leaves them to the user. A
    filter no config defines is nothing to git either (the agent's .gitattributes cannot hold commits back)."""
    defined = {name for kind, name in gitguard.drivers(Path(repo.working_tree_dir)) if kind == "filter"}
    if not paths or not defined:
        return set()
    out = repo.git.execute(["git", "check-attr", "-z", "--stdin", "filter"], istream=_stdin("\0".join(paths) + "\0"),
                           strip_newline_in_stdout=False)
    fields = out.split("\0")
    return {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] in defined}


def _stage(repo: git.Repo, root: Path, paths: list[str], env: dict[str, str]) -> None:
    """Stage ``paths`` as they are in the working tree (deletions too); a file replaced by a directory is removed."""
    env = {**env, "GIT_LITERAL_PATHSPECS": "1"}
    # A folder where a file was, and a path gone from the tree and the index alike (the source of the agent's own
    # `git mv`, which `git add` would refuse as a pathspec matching nothing): removed from the index.
    gone = [p for p in paths if ((root / p).is_dir() and not (root / p).is_symlink()) or not os.path.lexists(root / p)]
    files = [p for p in paths if p not in gone]
    if gone:
        repo.git.execute(["git", "update-index", "--force-remove", "-z", "--stdin"],
                         istream=_stdin("\0".join(gone) + "\0"), env=env)
    if files:
        repo.git.execute(["git", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
                         istream=_stdin("\0".join(files) + "\0"), env=env)


def _stdin(text: str):
    """A pipe's read end holding ``text``: GitPython's ``istream`` wants a file object."""
    import tempfile
    fh = tempfile.TemporaryFile()
    fh.write(text.encode("utf-8", "surrogateescape"))
    fh.seek(0)
    return fh


def untracked_paths(repo: git.Repo) -> list[str]:
    """Files git does not track and does not ignore (``??`` in git status), outside .nightshift/: what a new
    worktree, made from a commit, will not have."""
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", strip_newline_in_stdout=False)
    return [e[3:] for e in out.split("\0") if e.startswith("?? ") and not e[3:].startswith(".nightshift/")]
