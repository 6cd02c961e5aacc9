"""Planning a fleet and making its lanes. Everything a fleet could be refused for is checked before anything is
created (one line each): changes to tracked files (a worktree starts from a commit and would lose them; untracked
files are only named, since they are the user's to keep), a lane branch already taken, more lanes than the limits
can pay one shift each. A lane is a git worktree on its own branch holding an ordinary run
whose config is the fleet's with the lane's approach in the goal and the other lanes' folders out of sight.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from nightshift.supervisor import gitops
from nightshift.supervisor.config.schema import Config, parse_config
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import STATE_DIR_NAME, RunPaths


LANE_HOURS = 24.0 * 365  # a lane's own hour limit: the fleet keeps the real one


class FleetRefused(UserError):
    pass


def lanes_dir(workspace: Path, run_id: str) -> Path:
    """Where a fleet's worktrees live: inside the workspace's git-ignored state folder."""
    return Path(workspace) / STATE_DIR_NAME / "lanes" / run_id


def is_lane(workspace: Path) -> bool:
    """Is ``workspace`` a fleet's lane (a worktree lanes_dir made)? Its supervisor is the fleet's to restart."""
    parts = Path(workspace).parts
    return len(parts) >= 4 and parts[-4:-2] == (STATE_DIR_NAME, "lanes")


def failed_page(lane_worktree: Path) -> Path:
    """The fleet's page of failed approaches as a lane reads it: in the lane's .nightshift/, which is read-only
    inside the lane's boundary (a folder outside the worktree may not exist there at all: the host's /tmp does
    not). The fleet writes the same page into every lane whenever a lane ends."""
    return Path(lane_worktree) / STATE_DIR_NAME / "failed-approaches.md"


def branch_for(run_id: str, lane: int) -> str:
    return f"nightshift/{run_id}/lane-{lane}"


def refuse_fleet(workspace: Path, config: Config, run_id: str, lanes: int) -> list[str]:
    """Raise a one-line FleetRefused where this fleet cannot start; nothing is created before. Returns the untracked
    files the lanes will not see (they start from the last commit): no reason to refuse, but worth a word."""
    if lanes < 1:
        raise FleetRefused(f"--lanes {lanes}: a fleet needs 1 lane or more; give e.g. --lanes 4")
    if len(config.fleet.approaches) > lanes:
        raise FleetRefused(f"[fleet] approaches lists {len(config.fleet.approaches)} approaches for {lanes} lane(s); "
                           f"give at most one per lane, or run with --lanes {len(config.fleet.approaches)}")
    repo = gitops.open_repo(workspace)
    if gitops.head_sha(repo) is None:
        raise FleetRefused(f"{workspace} has no commit yet; lanes start from a commit: commit your work first")
    untracked = gitops.untracked_paths(repo)
    # Only a change to a tracked file refuses: the lane would work on the old version and its merge would clash.
    # Untracked files (a candidate the preflight's oracle just wrote, a scratch file) stay where they are.
    dirty = [p for p in gitops.worktree_changes(repo) if p not in set(untracked)]
    if dirty:
        raise FleetRefused(f"{workspace} has {len(dirty)} uncommitted change(s) to tracked files (e.g. {dirty[0]}); "
                           f"lanes start from the last commit and would not see them: commit or stash them, then "
                           f"run again")
    taken = [branch_for(run_id, k) for k in range(1, lanes + 1) if branch_for(run_id, k) in repo.heads]
    if taken:
        raise FleetRefused(f"branch {taken[0]} already exists; lanes need their own branches: delete it "
                           f"(`git branch -D {taken[0]}`) or start the fleet under another run id")
    limits = config.limits
    if limits.max_core_hours and config.backend.kind == "slurm":
        per_shift = _walltime_hours(config.slurm.time) * config.slurm.cpus
        if per_shift * lanes > limits.max_core_hours:
            raise FleetRefused(f"{lanes} lanes need {per_shift * lanes:g} core-hours for one shift each ([slurm] "
                               f"time x cpus) but [limits] max_core_hours = {limits.max_core_hours:g}; raise it or "
                               f"run fewer lanes")
    if limits.max_shifts < 1 or (limits.max_hours and limits.max_hours <= 0):
        raise FleetRefused("[limits] leaves no shift for any lane; raise max_shifts")
    return untracked


def untracked_note(untracked: list[str]) -> str:
    """The start line's word on the untracked files a fleet's lanes will not see ('' when there are none)."""
    if not untracked:
        return ""
    shown = ", ".join(untracked[:3]) + (f" and {len(untracked) - 3} more" if len(untracked) > 3 else "")
    return (f"; the lanes start from the last commit and do not see {len(untracked)} untracked file(s): {shown} "
            f"(commit what they need)")


def _walltime_hours(text: str) -> float:
    """Slurm's [days-]hours:minutes:seconds (or minutes) as hours."""
    days, _, rest = text.rpartition("-")
    parts = [float(p) for p in rest.split(":")]
    if len(parts) == 1:
        hours = parts[0] / 60
    else:
        while len(parts) < 3:
            parts.append(0.0)
        hours = parts[0] + parts[1] / 60 + parts[2] / 3600
    return hours + 24 * float(days or 0)


def lane_instruction(lane: int, approach: str, others: list[str], page: Path) -> str:
    if approach:
        told = f"Your approach in this lane: {approach}. Stay with it; record in CHANGELOG.md how it went."
    else:
        taken = "; ".join(a for a in others if a) or "none named"
        told = ("Choose one approach and name it in the first line of your CHANGELOG.md entry; it must differ from "
                f"the other lanes' approaches ({taken}).")
    return (f"\n\nYou are lane {lane} of a fleet: other agents work on the same goal in other worktrees, and "
            f"nightshift keeps the best verified one. {told} Approaches that already failed in this fleet are listed "
            f"in {page} (read-only): do not repeat them.")


def lane_config(config: Config, workspace: Path, lane: int, approach: str, others: list[str],
                siblings: list[Path], worktree: Path) -> Config:
    """The lane's frozen config: one lane, its instruction in the goal, and out of its sight the fleet's run
    directories, the workspace's reference copies and the visible references, and the other lanes' worktrees."""
    ws = Path(workspace)
    hide = list(config.policy.hide) + [str(ws / STATE_DIR_NAME / "runs"), str(ws / STATE_DIR_NAME / "references")]
    if config.oracle is not None:
        hide += [str(ws / c.reference.split(":", 1)[0]) for c in config.oracle.compare
                 if not c.heldout and (ws / c.reference.split(":", 1)[0]).exists()]
    hide += [str(p) for p in siblings]  # hidden once they exist (the namespace skips what is not there yet)
    raw = config.model_dump(exclude_none=True)
    raw["goal"] = config.goal + lane_instruction(lane, approach, others, failed_page(worktree))
    raw["fleet"] = {"lanes": 1}
    raw["policy"] = {**raw["policy"], "hide": hide}
    # Each lane in a tmux server of its own (ns-<lane run>): on one shared socket, starting a lane's supervisor
    # would end the one before it (each is the session 'supervisor').
    raw["backend"] = {**raw["backend"], "tmux_socket": ""}
    # One budget for the fleet: its supervisor counts cost, hours, core- and GPU-hours over every lane together and
    # pauses them all
    # (a lane's own count would stop it early, and its frozen limit would outlive a raise at `nightshift resume`).
    # max_shifts stays: it caps each lane.
    raw["limits"] = {**raw["limits"], "max_cost_usd": 0.0, "max_hours": LANE_HOURS, "max_core_hours": 0.0,
                     "max_gpu_hours": 0.0}
    return parse_config(tomli_w.dumps(raw))


def make_worktree(workspace: Path, path: Path, branch: str, start: str) -> None:
    """The lane's worktree on its own branch from ``start``; a worktree left by a crash is adopted."""
    repo = gitops.open_repo(workspace)
    if (path / ".git").exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    repo.git.worktree("prune")
    if branch in repo.heads:  # made before a crash, its worktree not yet
        repo.git.worktree("add", str(path), branch)
    else:
        repo.git.worktree("add", "-b", branch, str(path), start)


def make_lane(workspace: Path, config: Config, lane: dict[str, Any], siblings: list[Path],
              baseline: dict[str, Any] | None = None, released: list[dict[str, Any]] = ()) -> RunPaths:
    """The worktree and the lane's run in it, given the fleet's test ratchet starting set ``baseline`` (the
    ``tests.baseline`` event's data) less what a person ``released`` from it since; idempotent: a crash between the
    steps is picked up."""
    from nightshift.supervisor.shift.launcher import create_run

    path = Path(lane["worktree"])
    make_worktree(workspace, path, lane["branch"], lane["start"])
    run = RunPaths.for_run(path, lane["run_id"])
    if not run.events.exists():
        cfg = lane_config(config, workspace, lane["lane"], lane["approach"], lane["others"], siblings, path)
        run = create_run(path, cfg, run_id=lane["run_id"])
    give_baseline(run, baseline, released)
    return run


def give_baseline(run: RunPaths, baseline: dict[str, Any] | None, released: list[dict[str, Any]] = ()) -> None:
    """The fleet's test ratchet starting set becomes the lane's first record after its creation (before its
    supervisor starts, which would otherwise take its own): every lane keeps what passed when the fleet began."""
    from nightshift.supervisor.run.events import EventLog
    from nightshift.supervisor.run.state import load_state

    state = load_state(run.root)[0]
    if baseline is None or state.get("ratchet") is not None or state["phase"] != "new" or run.supervisor.exists():
        return
    log = EventLog(run.events, last_seq=state["seq"])
    try:
        log.append("tests.baseline", None, **{**baseline, "source": "fleet"})
        for release in released:
            log.append("test.released", None, **{**release, "files": []})
    finally:
        log.close()
