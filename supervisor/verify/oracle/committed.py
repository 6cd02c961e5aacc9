"""A reference kept in git: a file the agent committed during the run (any commit from the run's base to HEAD, or
in its latest stash; also one deleted again in a later commit) whose blob equals a reference's. The oracle
command can read git's store as well as the work tree, so a copy that lives only in history is still a copy.

Git names a blob by the sha1 of "blob <length>\\0" + its bytes, so a reference's blob id (stash.digests) is
compared with the blob ids ``git log --raw`` lists for each commit, without reading any blob. Git runs through
gitguard.run_git (no hook, filter or pager of the workspace's runs).
"""
from __future__ import annotations

from pathlib import Path

from supervisor.gitguard import run_git


def committed_blobs(workspace: Path, base: str) -> tuple[list[tuple[str, str]], str | None]:
    """([(blob id, path)] added or changed by the commits after ``base``, a note when git could not list them)."""
    revs = [f"{base}..HEAD"]
    if run_git(workspace, "rev-parse", "--verify", "-q", "refs/stash").returncode == 0:
        revs.append("refs/stash")  # a stash is commits too: "git stash" is a place to keep a file out of sight
    out = run_git(workspace, "log", "-m", "--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x01%H",
                  *revs, "--not", base, "--", text=False)
    if out.returncode != 0:
        return [], f"the agent's commits were not checked for copies of a reference (git log failed: " \
                   f"{out.stderr.decode('utf-8', 'replace').strip()[:200]})"
    found, tokens = [], out.stdout.split(b"\0")
    for at, token in enumerate(tokens[:-1]):
        head = token.lstrip(b"\n")
        if head.startswith(b":"):
            fields = head.split()
            if len(fields) >= 5 and set(fields[3]) != {ord("0")}:  # a deletion's new blob is all zeros
                found.append((fields[3].decode(), tokens[at + 1].decode("utf-8", "replace")))
    return found, None


def committed_copies(workspace: Path, base: str | None, references: list[tuple[str, str]],
                     own_paths: set[str]) -> tuple[list[str], list[str]]:
    """(findings, notes): each path committed after ``base`` with the blob of a reference (``references``: [(label,
    blob id)]); ``own_paths``: the references' and candidates' own places, and copies named already."""
    if not base or not references:
        return [], []
    blobs, problem = committed_blobs(workspace, base)
    by_blob = {blob: label for label, blob in references}
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
