"""What the judge reads, gathered from the workspace: the rubric, the diff, the newest CHANGELOG entry.

Never the agent's transcript or reasoning. The diff covers everything since the last accepted state, committed
or not (a private temporary index, so the user's index is untouched), trimmed to a size that says what it left
out.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import git

from nightshift.supervisor import gitops
from nightshift.supervisor.candidate_index import stage_candidate
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES
from nightshift.supervisor.gitguard import NO_DIFF_PROGRAMS
from nightshift.supervisor.run import untrusted
from nightshift.supervisor.config.judge import JudgeConfig
from nightshift.supervisor.verify import definition_of_done as dod

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)")


@dataclass
class JudgeInputs:
    rubric: list[str]           # criteria: CLAUDE.md "Definition of done" items + cfg.criteria
    diff: str                   # git diff since the last accepted state (trimmed, saying what was trimmed)
    oracle_report: dict | None  # the oracle's JSON report (held-out values already redacted)
    test_summary: str
    changelog_entry: str        # the newest CHANGELOG.md entry (with the "Current status" section)
    goal: str


def gather_inputs(workspace: Path, cfg: JudgeConfig, since_commit: str | None, oracle_report: dict | None,
                  test_summary: str, goal: str, max_bytes: int = MAX_COMMIT_BYTES) -> JudgeInputs:
    """``max_bytes``: [verify] max_commit_mb, what a commit (and so the diff) never takes."""
    workspace = Path(workspace)
    rubric = definition_of_done(workspace / "CLAUDE.md")
    rubric += [c for c in cfg.criteria if c not in rubric]
    try:
        diff = trim_diff(*workspace_diff(workspace, since_commit, max_bytes), cfg.max_diff_chars)
    except (git.GitError, gitops.GitError, OSError, subprocess.SubprocessError) as exc:  # GitGuardError is an OSError
        diff = f"[nightshift: the diff could not be computed: {str(exc).splitlines()[0][:200]}]"
    return JudgeInputs(rubric=rubric, diff=diff, oracle_report=oracle_report, test_summary=test_summary,
                       changelog_entry=newest_changelog_entry(workspace / "CHANGELOG.md"), goal=goal)


def definition_of_done(claude_md: Path) -> list[str]:
    """The list items under the "Definition of done" heading of CLAUDE.md, checkboxes stripped."""
    try:
        return dod.items(untrusted.read_text(claude_md.parent, claude_md.name))
    except OSError:
        return []


def newest_changelog_entry(changelog: Path) -> str:
    """The "Current status" section and the newest entry (latest ISO date in its heading, else the last one)."""
    try:
        text = untrusted.read_text(changelog.parent, changelog.name)
    except untrusted.Untrusted as exc:
        return f"(CHANGELOG.md not quoted: {exc})"
    except OSError:
        return "(no CHANGELOG.md)"
    status = _section(text, r"^##\s+current status", level=2)
    entries = [m for m in re.finditer(r"^###\s+(.*)$", text, flags=re.M)]
    newest = ""
    if entries:
        dated = [(_ISO_DATE.match(m.group(1).strip()), i) for i, m in enumerate(entries)]
        if all(d for d, _ in dated):
            pick = max(dated, key=lambda d: (d[0].group(1).replace("T", " "), d[1]))[1]
        else:
            pick = len(entries) - 1
        start = entries[pick].start()
        end = _next_heading(text, entries[pick].end(), max_level=3)
        newest = text[start:end].strip()
    parts = [p for p in (status, newest) if p]
    return "\n\n".join(parts) if parts else text.strip()[-4000:]


def _section(text: str, heading_re: str, level: int) -> str:
    match = re.search(heading_re, text, flags=re.M | re.I)
    if not match:
        return ""
    return text[match.start():_next_heading(text, match.end(), max_level=level)].strip()


def _next_heading(text: str, pos: int, max_level: int) -> int:
    match = re.compile(rf"^#{{1,{max_level}}}\s", flags=re.M).search(text, pos)
    return match.start() if match else len(text)


def workspace_diff(workspace: Path, since_commit: str | None, max_bytes: int = MAX_COMMIT_BYTES) -> tuple[str, str]:
    """(stat, patch) from ``since_commit`` (None: from nothing) to the candidate a commit would hold (the working
    tree, untracked files included, what a commit never takes left out: candidate_index.py)."""
    repo = gitops.open_repo(workspace)  # guarded: no filter or driver the repository names runs
    base = since_commit or EMPTY_TREE
    fd, index = tempfile.mkstemp(prefix="nightshift-judge-index-")
    os.close(fd)
    try:
        env = stage_candidate(Path(workspace), Path(index), max_bytes)
        stat = repo.git.diff(*NO_DIFF_PROGRAMS, "--cached", "--stat=120", base, env=env)
        patch = repo.git.diff(*NO_DIFF_PROGRAMS, "--cached", "--no-color", base, env=env)
        return stat, unblinded(repo, patch, base, env)
    finally:
        if os.path.exists(index):
            os.unlink(index)


TEXT_PROBE = 8000  # git's own rule: a NUL in the first 8000 bytes makes a file binary
TEXT_LIMIT = 1 << 20  # a larger file is not read as text for the judge (its diff would be trimmed away anyway)


def unblinded(repo, patch: str, base: str, env: dict[str, str]) -> str:
    """The patch with the workspace's attributes ignored for text: `solver.py -diff` in .gitattributes made the
    solver's diff "Binary files differ" to the judge. Each changed file is text or binary by its content (git's
    own NUL rule, read here); the text ones are diffed with --text, the rest as git says."""
    if "Binary files " not in patch:
        return patch
    env = {**env, "GIT_LITERAL_PATHSPECS": "1"}
    names = repo.git.diff("--cached", "--name-only", "-z", base, env=env).split("\0")
    text, binary = [], []
    for name in filter(None, names):
        (text if _is_text(Path(repo.working_tree_dir), name) else binary).append(name)
    parts = [repo.git.diff(*NO_DIFF_PROGRAMS, "--cached", "--no-color", "--text", base, "--", *text, env=env)
             if text else "",
             repo.git.diff(*NO_DIFF_PROGRAMS, "--cached", "--no-color", base, "--", *binary, env=env)
             if binary else ""]
    return "\n".join(part for part in parts if part)


def _is_text(root: Path, name: str) -> bool:
    """Is the working tree's ``name`` (what was just staged) text by git's rule? Read without following a link out,
    no process started (two git calls a file read it from the index before)."""
    try:
        with os.fdopen(untrusted.open_beneath(root, name), "rb") as fh:
            return os.fstat(fh.fileno()).st_size <= TEXT_LIMIT and b"\0" not in fh.read(TEXT_PROBE)
    except OSError:  # deleted (its old side is shown as git says), a link out, a FIFO
        return False


def trim_diff(stat: str, patch: str, max_chars: int) -> str:
    """The stat plus as many whole file diffs as fit (smallest first, shown in order); names what was left out."""
    files = re.split(r"(?=^diff --git )", patch, flags=re.M)
    files = [f for f in files if f.strip()]
    if len(stat) > max_chars // 4:  # thousands of files: the stat itself must not eat the budget
        kept = stat[: max_chars // 4].rsplit("\n", 1)[0]
        stat = f"{kept}\n[nightshift: stat trimmed; {stat.count(chr(10)) + 1} lines in all]\n{stat.splitlines()[-1]}"
    header = f"Files changed:\n{stat}\n\n" if stat else "No changes.\n"
    budget = max_chars - len(header)
    keep: set[int] = set()
    for i in sorted(range(len(files)), key=lambda i: len(files[i])):
        if len(files[i]) <= budget:
            keep.add(i)
            budget -= len(files[i])
    dropped = [f"{_diff_path(files[i])} ({len(files[i])} chars)" for i in range(len(files)) if i not in keep]
    body = "".join(files[i] for i in range(len(files)) if i in keep)
    if dropped:
        note = (f"\n[nightshift: the diff was trimmed to about {max_chars} chars; left out the diffs of "
                f"{len(dropped)} file(s): {', '.join(dropped)}. Their names and sizes are in the stat above.]\n")
        return header + body + note
    return header + body


def _diff_path(file_diff: str) -> str:
    first = file_diff.splitlines()[0] if file_diff else ""
    match = re.match(r"diff --git a/(.*?) b/", first)
    return match.group(1) if match else first[:80]
