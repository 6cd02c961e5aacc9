"""nightshift, not the lane, decides: a lane's claim of done is checked again by the fleet in a fresh worktree of
the lane's commit (never the lane's own folder, where an untracked file or a tampered reference could help), with
the ordinary pipeline at a claim of done: every check, the full oracle and its held-out comparisons, against the
references the fleet protected when it began (a reference the lane changed and committed is restored and named).

Also: which findings of a verdict are cheating (answers copied or read, protected files changed), so the lane is
named as such in the run's CHANGELOG.md.
"""
from __future__ import annotations

import json
import shutil
from typing import Any

from nightshift.supervisor import gitops
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.run.heldout import check_report, private_folder, read_private
from nightshift.supervisor.run.paths import RunPaths, make_private_dir
from nightshift.supervisor.verify.oracle.integrity import heldout_store
from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.shift.ratchet import at_start, goal, held, kept
from nightshift.supervisor.verify.pipeline import StopContext, Verdict, verify_stop

# Findings that are not a wrong answer but a way around the check: the lane is named for them.
CHEAT_MARKS = ("may be a copy of", "holds the same bytes as", "holds the values of", "committed with the bytes of",
               "of a reference's values in a row", "tried to read", "restored after tampering",
               "was changed in the workspace", "was deleted in the workspace", "not the agent's to change")


def cheats_in(checks: list[dict[str, Any]]) -> list[str]:
    found = []
    for check in checks:  # each finding once: from its own line, else from the check's summary
        lines = [line for line in check.get("lines", []) if any(mark in line for mark in CHEAT_MARKS)]
        summary = check.get("summary", "")
        if not lines and any(mark in summary for mark in CHEAT_MARKS):
            lines = [summary]
        found += [line for line in lines if line not in found]
    return found


def reverify(fleet: RunPaths, config: Config, lane: int, sha: str, lane_run: RunPaths,
             base: str) -> tuple[Verdict, dict[str, Any] | None]:
    """The verdict of a clean checkout of ``sha`` (made afresh: a crash mid-check checks again from scratch), and
    its held-out comparisons as the fleet ranks them ({passed, worst}; None without any). The verdict carries no
    held-out figure (the exam keeps them private); the full ones are kept beside the fleet's own held-out copies."""
    folder = fleet.fleet_check(lane, sha)
    repo = gitops.open_repo(fleet.workspace)
    if folder.exists():
        repo.git.worktree("remove", "--force", str(folder / "ws")) if (folder / "ws" / ".git").exists() else None
        shutil.rmtree(folder, ignore_errors=True)
    repo.git.worktree("prune")
    folder.mkdir(parents=True, mode=0o700)
    ws = folder / "ws"
    repo.git.worktree("add", "--detach", str(ws), sha)
    run = RunPaths.for_run(ws, "check").create()
    _copy_stores(fleet, run)
    lane_state = load_state(lane_run.root)[0]  # the lane's test ratchet: its starting set, less what was released
    recorded = set(_record(lane_run, "tests-passed.json", []))  # read once: the ratchet's set and the held one
    try:
        verdict = verify_stop(StopContext(
            run=run, config=config, shift=1, turn=1, claim={"status": "done", "summary": "re-verified by the fleet"},
            shift_base=base, accepted_base=base,
            passed_before=kept(lane_state, recorded),
            plan_known=_record(lane_run, "plan-known.json", {}) or {}, baseline=at_start(lane_state),
            passed_total=(lane_state.get("ratchet") or {}).get("passed_total"),
            released=set((lane_state.get("ratchet") or {}).get("released") or {}),
            held=held(lane_state, recorded), goal=goal(lane_state)))
        return verdict, _held(run, fleet, folder.name)
    finally:
        # The checkout goes (its verdict and oracle report stay in the fleet's run directory).
        keep = folder / "verdict"
        shutil.copytree(run.shift_dir(1), keep, dirs_exist_ok=True)
        repo.git.worktree("remove", "--force", str(ws))
        shutil.rmtree(heldout_store(run.references), ignore_errors=True)


def _held(run: RunPaths, fleet: RunPaths, name: str) -> dict[str, Any] | None:
    """The check's full held-out figures: kept in the fleet's private folder (outside the workspace), summed up."""
    private = read_private(run.root, 1, 1)
    if not private or not private.get("comparisons"):
        return None
    make_private_dir(private_folder(fleet.root))
    keep = check_report(fleet.root, name)
    keep.write_text(json.dumps(private))
    ratios = [float(c.get("ratio", 0)) for e in private["comparisons"] for c in e.get("columns") or []]
    return {"passed": all(e.get("passed") for e in private["comparisons"]), "worst": max(ratios) if ratios else None}


def _copy_stores(fleet: RunPaths, run: RunPaths) -> None:
    """The fleet's protected copies (references, held-out references, the kept files) for the check's run."""
    if fleet.references.is_dir():
        shutil.copytree(fleet.references, run.references)
    held = heldout_store(fleet.references)
    if held.is_dir():
        shutil.copytree(held, heldout_store(run.references), dirs_exist_ok=True)
    if (fleet.root / "protected").is_dir():
        shutil.copytree(fleet.root / "protected", run.root / "protected")


def _record(run: RunPaths, name: str, default: Any) -> Any:
    try:
        value = json.loads((run.root / name).read_text())
    except (OSError, ValueError):
        return default
    return set(value) if isinstance(value, list) else value
