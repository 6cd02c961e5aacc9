"""Committing a stop's work: the paths the run may commit (gitops.commit_changes: never the user's own untouched
edits, never conflict markers, nothing a filter driver would change), the event that says what was committed or
why nothing was, and a hold with git's own words when git cannot commit. ``sup`` is the shift loop
(shift/loop.py), as decide.py takes it.
"""
from __future__ import annotations

import shlex

import git

from nightshift.supervisor import gitops


def commit_shift(sup) -> None:
    """Commit the stop's work (the paths the run may commit), or hold the run with git's own words."""
    ctx, verdict = sup.session.ctx(), sup.state["last_verdict"]
    verdict_word = "PASS" if verdict["passed"] else "FAIL"
    message = f"nightshift: shift {ctx.shift} turn {ctx.turn}: {verdict_word}\n\n{verdict['summary'][:1500]}"
    branch = gitops.branch_name(sup.repo)
    if sup.state.get("branch") and branch is None:  # detached during the run: commits would be off-branch
        switch = shlex.join(["git", "-C", str(sup.run_paths.workspace), "switch", sup.state["branch"]])
        return hold_commit(sup, f"HEAD was detached during the run (it was on {sup.state['branch']}); "
                                f"`{switch}` (or a new branch), then `nightshift resume {sup.run_paths.run_id}`")
    try:
        sha, left = gitops.commit_changes(sup.repo, message, sup.ledger.prerun(),
                                          max_bytes=int(sup.config.verify.max_commit_mb * (1 << 20)),
                                          run_base=sup.state.get("run_base"))
    except git.GitCommandError as exc:
        # A stale .git/index.lock, a full disk, a broken hook...: hold the run with git's own words.
        said = " ".join((exc.stderr or str(exc)).replace("stderr:", "").split())[:300]
        return hold_commit(sup, f"git could not commit shift {ctx.shift} turn {ctx.turn}: {said}; fix it "
                                f"(a stale .git/index.lock can be removed when no git runs), then "
                                f"`nightshift resume {sup.run_paths.run_id}`")
    head = gitops.head_sha(sup.repo)
    # Progress is what changed since the last verdict, the agent's own commits included: an agent that commits
    # its work itself (CLAUDE.md tells it to) leaves nothing for us to commit, and is not stuck for that.
    # The lab notes and the plan alone are no change to the work: an agent that only writes a CHANGELOG entry at
    # every stop, with the verdict no better, is stuck, and the breaker pauses the run after a few such stops.
    stale = not work_changed(sup.repo, sup.state.get("last_head"), head) and not improved(sup)
    kind = "commit.created" if sha else "commit.skipped"
    sup.emit(kind, ctx.shift, turn=ctx.turn, sha=sha, head=head, passed=verdict["passed"],
             stale=stale, message=message.splitlines()[0], branch=branch, kept_out=left["kept_out"][:20],
             conflicts=left["conflicts"][:20], filtered=left.get("filtered", [])[:20],
             refused={kind: names[:20] for kind, names in left.get("refused", {}).items()})


def hold_commit(sup, reason: str) -> None:
    """Pause before committing (the commit is retried on resume), even when the run was already paused."""
    sup.pause("git", reason)
    sup.wait_while_paused()
    if sup.stop_requested:  # stopped while git was broken: end without the commit, saying so
        sup.finish("stopped", f"stopped by the user; the last turn's work is not committed ({reason[:200]})")

NOTES = ("CHANGELOG.md", "CLAUDE.md")  # the lab notes and the plan, at the workspace's top


def work_changed(repo: git.Repo, before: str | None, after: str | None) -> bool:
    """Do the two commits differ in anything but NOTES? (names only: no diff driver or textconv runs)"""
    if not gitops.tree_changed(repo, before, after):
        return False
    if before is None or after is None:
        return True
    try:
        names = repo.git.diff("--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", before, after, "--")
    except git.GitCommandError:
        return True
    return any(name and name not in NOTES for name in names.splitlines())


def improved(sup) -> bool:
    """Is the newest verdict better than every earlier one (lower metric, or fewer failing checks)?"""
    history = sup.state["metrics"]
    if not history:
        return False
    newest, earlier = history[-1]["metric"], [m["metric"] for m in history[:-1] if m["metric"] is not None]
    if newest is not None and (not earlier or newest < min(earlier)):
        return True
    failing = sum(1 for c in sup.state["last_verdict"].get("checks", []) if not c["passed"])
    best = sup._fewest_failing
    sup._fewest_failing = failing if best is None else min(best, failing)
    return best is not None and failing < best
