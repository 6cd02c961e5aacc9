"""The end of a fleet: the winner merged into the run's branch (fast-forward only: a branch the user moved since
the fleet began is never merged over; the fleet holds and says how to go on), and every lane written into the
run's CHANGELOG.md with its approach, outcome and numbers; the failed-approaches page the lanes read.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import git

from nightshift.supervisor import gitops

OUTCOME_WORDS = {"won": "kept (merged)", "failed": "failed", "dominated": "dominated", "stopped": "stopped",
                 "retired": "retired (stalled)", "cheated": "CAUGHT CHEATING", "spent": "budget spent"}


def merge_problem(workspace: Path, branch: str | None, base: str) -> str | None:
    """Why the winner cannot be merged now (one line), or None."""
    repo = gitops.open_repo(workspace)
    now, on = gitops.head_sha(repo), gitops.branch_name(repo)
    if branch and on != branch:
        return f"{workspace} is on {on or 'a detached HEAD'}, not {branch} where the fleet began; `git switch {branch}`"
    if now != base:
        return (f"branch {branch} moved since the fleet began (was {base[:10]}, now {(now or '?')[:10]}): nothing "
                f"was merged over it")
    untracked = set(gitops.untracked_paths(repo))
    if [p for p in gitops.worktree_changes(repo) if p not in untracked]:
        return f"{workspace} has uncommitted changes to tracked files; commit or stash them"
    return None


def merge_winner(workspace: Path, lane_branch: str, set_aside: Path) -> tuple[str, list[str]]:
    """Fast-forward the run's branch to the winning lane's branch; returns the new HEAD and the untracked files
    moved into ``set_aside`` first. An untracked file the winner tracks (an output the preflight's oracle wrote
    before the fleet began, say) would stop git's merge; it is the user's, so it is kept there, never deleted."""
    repo = gitops.open_repo(workspace)
    root = Path(repo.working_tree_dir)
    theirs = set(repo.git.ls_tree("-r", "-z", "--name-only", lane_branch).split("\0"))
    moved = [p for p in gitops.untracked_paths(repo) if p in theirs]
    for rel in moved:
        target = set_aside / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        (root / rel).rename(target)
    repo.git.merge("--ff-only", "-q", lane_branch)
    return gitops.head_sha(repo), moved


def lanes_section(rows: list[dict[str, Any]], winner: int | None, why: str) -> str:
    """The lanes of the run as lab notes: one line each, the winner first, numbers from the fleet's checks (the
    held-out comparisons as pass or fail only: this is committed to the run's branch)."""
    today = dt.date.today().isoformat()
    out = [f"\n### {today}: lanes (nightshift fleet)\n", f"- Winner: lane {winner} ({why})" if winner
           else "- No lane was verified done."]
    for row in sorted(rows, key=lambda r: (r["lane"] != winner, r["lane"])):
        metric = "-" if row.get("metric") is None else f"{row['metric']:.3g}"
        line = (f"- lane {row['lane']} ({row['branch']}): approach: {row['approach'] or 'its own choice'}; "
                f"{OUTCOME_WORDS.get(row['outcome'], row['outcome'])}; worst error / tolerance {metric}; "
                f"shifts {row.get('shift', 0)}; cost ${row.get('cost_usd') or 0:.2f}")
        if row.get("heldout"):
            line += f"; held-out: {row['heldout']}"
        if row.get("forked_from"):
            line += f"; forked from lane {row['forked_from']}"
        if row.get("reason"):
            line += f"; {row['reason']}"
        out.append(line)
        out += [f"    caught: {c}" for c in (row.get("cheats") or [])[:3]]
    return "\n".join(out) + "\n"


def record_lanes(workspace: Path, text: str, message: str) -> str | None:
    """Append the lanes to CHANGELOG.md and commit it on the run's branch; the new HEAD (None when unchanged)."""
    path = Path(workspace) / "CHANGELOG.md"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    repo = gitops.open_repo(workspace)
    try:
        sha, _ = gitops.commit_changes(repo, message)
    except git.GitCommandError:
        return None
    return sha


def failed_page_text(rows: list[dict[str, Any]]) -> str:
    lines = ["# Approaches that failed in this fleet", "",
             "Written by nightshift; read-only. Do not repeat these: take another way, or say why yours differs.", ""]
    failed = [r for r in rows if r["outcome"] in ("failed", "retired", "cheated", "spent")]
    for row in failed:
        metric = "-" if row.get("metric") is None else f"{row['metric']:.3g}"
        lines.append(f"- lane {row['lane']}: {row['approach'] or 'its own choice'}: "
                     f"{OUTCOME_WORDS.get(row['outcome'], row['outcome'])}, worst error / tolerance {metric}"
                     + (f" ({row['reason']})" if row.get("reason") else ""))
    if not failed:
        lines.append("(none yet)")
    return "\n".join(lines) + "\n"
