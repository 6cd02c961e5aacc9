"""`nightshift run --lanes N` (or [fleet] lanes = N): the fleet's run is an ordinary run directory in the workspace
whose frozen config has lanes > 1; its supervisor is the fleet's. Bad input is refused before anything is made.
"""
from __future__ import annotations

from pathlib import Path

import tomli_w

from nightshift.supervisor.config.schema import Config, parse_config
from nightshift.supervisor.run.paths import RunPaths, new_run_id


def with_lanes(config: Config, lanes: int | None) -> Config:
    if lanes is None:
        return config
    raw = config.model_dump(exclude_none=True)
    raw["fleet"] = {**raw.get("fleet", {}), "lanes": lanes}
    if lanes < 1:  # said here, not as a schema error: the user typed --lanes, not [fleet] lanes
        from nightshift.supervisor.fleet.lanes import FleetRefused
        raise FleetRefused(f"--lanes {lanes}: a fleet needs 1 lane or more; give e.g. --lanes 4")
    if len(config.fleet.approaches) > lanes:
        from nightshift.supervisor.fleet.lanes import FleetRefused
        raise FleetRefused(f"[fleet] approaches lists {len(config.fleet.approaches)} approaches for {lanes} lane(s); "
                           f"give at most one per lane, or run with --lanes {len(config.fleet.approaches)}")
    return parse_config(tomli_w.dumps(raw))


def is_fleet(config: Config) -> bool:
    return config.fleet.lanes > 1


def refuse_fleet_now(workspace: Path, config: Config) -> str:
    """Every reason this fleet cannot start, as one line, before anything (the preflight too) runs; its run id."""
    from nightshift.supervisor.fleet.lanes import refuse_fleet
    from nightshift.supervisor.shift.launcher import refuse_to_start

    run_id = new_run_id()
    refuse_to_start(workspace, config)
    refuse_fleet(workspace, config, run_id, config.fleet.lanes)
    return run_id


def start_note(workspace: Path, config: Config) -> str:
    """What a fleet's start line adds: the untracked files its lanes will not see ('' for one run, or none)."""
    if not is_fleet(config):
        return ""
    from nightshift.supervisor import gitops
    from nightshift.supervisor.fleet.lanes import untracked_note

    return untracked_note(gitops.untracked_paths(gitops.open_repo(workspace)))


def create_fleet(workspace: Path, config: Config, run_id: str | None = None) -> RunPaths:
    """The fleet's run (checked again: the preflight may have taken a while); its lanes are made by its supervisor."""
    from nightshift.supervisor.shift.launcher import create_run

    run_id = refuse_fleet_now(workspace, config) if run_id is None else _checked(workspace, config, run_id)
    return create_run(workspace, config, run_id=run_id)


def _checked(workspace: Path, config: Config, run_id: str) -> str:
    from nightshift.supervisor.fleet.lanes import refuse_fleet
    from nightshift.supervisor.shift.launcher import refuse_to_start

    refuse_to_start(workspace, config)
    refuse_fleet(workspace, config, run_id, config.fleet.lanes)
    return run_id


def supervise_any(run: RunPaths, say=print, leave_on_outcome: bool = False, let_go_when_held: bool = False) -> int:
    """The run's supervisor: the fleet's for a fleet, else the ordinary shift loop (``let_go_when_held``: it ends
    at a budget's or breaker's hold; shift.loop.Supervisor)."""
    from nightshift.supervisor.run.own_python import guard_roots, install_import_guard
    from nightshift.supervisor.shift.launcher import frozen_config, run_foreground

    install_import_guard(guard_roots(run.workspace))  # from here on, nothing loads from the workspace
    config = frozen_config(run)
    if is_fleet(config):
        from nightshift.supervisor.fleet.loop import FleetSupervisor
        return FleetSupervisor(run, config, say=say).run()
    return run_foreground(run, say=say, leave_on_outcome=leave_on_outcome, let_go_when_held=let_go_when_held)
