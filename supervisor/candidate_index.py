"""A private index holding what a stop's commit would hold, for the readers of the candidate (the judge's diff, the
held-out tests' clean checkout): the user's index copied, so files git already knows unchanged are not hashed again,
then every change git does not ignore staged, but what a commit never takes (gitops.never_committed: a file a
filter driver rewrites, a giant, a link out of the workspace, a nested repository). The user's own index is never
touched.

May import: gitguard, gitops, commit_refusals.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from nightshift.supervisor import gitops
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES
from nightshift.supervisor.gitguard import git_dirs, run_git


def stage_candidate(workspace: Path, index: Path, max_bytes: int = MAX_COMMIT_BYTES) -> dict[str, str]:
    """Fill ``index`` (a file path of ours, absent or not) with the candidate; returns the environment that points
    git at it."""
    workspace, index = Path(workspace), Path(index)
    real = git_dirs(workspace)[0] / "index"
    try:
        regular = stat.S_ISREG(os.lstat(real).st_mode)
    except FileNotFoundError:
        regular = False
    if regular:
        shutil.copyfile(real, index, follow_symlinks=False)
        # the copy keeps the index's own times: git tells a file changed within the second the index was written
        # ("racily clean") by comparing with the index file's mtime, and a copy made now hid every such change (a
        # one-byte file rewritten within a second went into the verdict's tree as its old blob)
        shutil.copystat(real, index, follow_symlinks=False)
    elif index.exists():
        index.unlink()  # git wants a missing index, not an empty file
    env = {"GIT_INDEX_FILE": str(index)}
    repo = gitops.open_repo(workspace)
    filtered, refused = gitops.never_committed(repo, gitops.worktree_changes(repo), max_bytes)  # the commit's rule
    never = sorted(filtered | {p for names in refused.values() for p in names})
    if never:  # a version of one the user staged is not the commit's either (commit_only starts from HEAD)
        run_git(workspace, "rm", "--cached", "-q", "-r", "--ignore-unmatch", "--", *(f":(literal){p}" for p in never),
                env=env, check=True)
    run_git(workspace, "add", "-A", "--", ".", *(f":(exclude,literal){p}" for p in never), env=env, check=True)
    return env
