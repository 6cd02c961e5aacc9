"""A reference kept in git: a file the agent committed during the run (any commit from the run's base to HEAD, in
its latest stash (its own: a fleet lane does not answer for another lane's), or taken back but still in the reflog;
also one deleted again in a later commit) whose blob
equals a reference's. The oracle
command can read git's store as well as the work tree, so a copy that lives only in history is still a copy.

Git names a blob by the sha1 of "blob <length>\\0" + its bytes, so a reference's blob id (stash.digests) is
compared with the blob ids ``git log --raw`` lists for each commit, without reading any blob. Git runs through
gitguard.run_git (no hook, filter or pager of the workspace's runs).
"""
from __future__ import annotations

from pathlib import Path

from nightshift.supervisor.gitguard import run_git

HEX = [bytes([c]) for c in b"0123456789abcdef"]
REFLOG_ENTRIES = 200  # the newest moves of HEAD looked at (a run's own; older ones are the ancestors of its base)


def committed_blobs(workspace: Path, base: str, wanted: set[str]) -> tuple[list[tuple[str, str]], str | None]:
    """([(blob id, path)] of ``wanted`` blobs added or changed by the commits after ``base``, a note when git could
    not list them). The listing is parsed only where a wanted id occurs in it (a run of honest commits: never)."""
    # A commit taken back (reset, amend) is still in git's store, and this work tree's HEAD reflog still names it
    # (HEAD's only: a fleet's other lanes share the branches' reflogs, and their commits are not this agent's).
    taken_back = run_git(workspace, "reflog", "show", "-n", str(REFLOG_ENTRIES), "--format=%H", "HEAD")
    visited = set(taken_back.stdout.split()) if taken_back.returncode == 0 else set()
    revs = ["HEAD", *sorted(visited)]
    if _own_stash(workspace, visited):
        revs.append("refs/stash")  # a stash is commits too: "git stash" is a place to keep a file out of sight
    out = run_git(workspace, "log", "-m", "--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x01%H",
                  *revs, "--not", base, "--", text=False)
    if out.returncode != 0:
        return [], f"the agent's commits were not checked for copies of a reference (git log failed: " \
                   f"{out.stderr.decode('utf-8', 'replace').strip()[:200]})"
    found = []
    for blob in wanted:  # ":<mode> <mode> <old id> <new id> <status>\0<path>\0" a change, searched by id
        key, at = blob.encode(), 0
        while (at := out.stdout.find(key, at)) >= 0:
            end = at + len(key)
            at = end
            if out.stdout[end:end + 1] != b" " or out.stdout[end + 1:end + 2] in HEX:
                continue  # the old side of a change (another id follows), or not a whole id
            path_at = out.stdout.find(b"\0", end) + 1
            path = out.stdout[path_at:out.stdout.find(b"\0", path_at)]
            found.append((blob, path.decode("utf-8", "replace")))
    return found, None


def _own_stash(workspace: Path, visited: set[str]) -> bool:
    """There is a latest stash and it is this work tree's. refs/stash is shared by every worktree of a repository
    (a fleet's lanes): in a lane, a stash counts only when it was made on a commit this lane's HEAD was at (its
    first parent is in ``visited``, HEAD's reflog), so another lane's stash is no finding here."""
    stash = run_git(workspace, "rev-parse", "--verify", "-q", "refs/stash^1")
    if stash.returncode != 0:
        return False
    dirs = run_git(workspace, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
    lines = dirs.stdout.split("\n") if dirs.returncode == 0 else []
    lane = len(lines) >= 2 and Path(lines[0]).resolve() != Path(lines[1]).resolve()
    return not lane or stash.stdout.strip() in visited


def committed_copies(workspace: Path, base: str | None, references: list[tuple[str, str]],
                     own_paths: set[str]) -> tuple[list[str], list[str]]:
    """(findings, notes): each path committed after ``base`` with the blob of a reference (``references``: [(label,
    blob id)]); ``own_paths``: the references' and candidates' own places, and copies named already."""
    if not base or not references:
        return [], []
    by_blob = {blob: label for label, blob in references}
    blobs, problem = committed_blobs(workspace, base, set(by_blob))
    findings, named = [], set()
    for blob, path in blobs:
        label = by_blob.get(blob)
        if label is None or path in own_paths or path in named:
            continue
        named.add(path)
        findings.append(f"{path} was committed with the bytes of {label} (in a commit since the run began, "
                        "deleted since or not): a copy of a reference kept in git, where the solver can read it; "
                        "compute the output instead; a run may not rewrite history, so ask the user to drop that "
                        "commit (nightshift claim blocked)")
    return findings, [problem] if problem else []
