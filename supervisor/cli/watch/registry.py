"""`nightshift ls` (with `--prune`) and `nightshift forget RUN`: the user's registry of runs, listed and kept clean.

A line of the registry that is not a run is skipped and reported on stderr, never a traceback; a run whose
folder is gone is listed as missing until the user drops it. Dropping asks first in a terminal (`--yes` for
scripts) and rewrites the registry under its lock, so nothing but the dropped lines is lost.
"""
from __future__ import annotations

import sys
from pathlib import Path

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import registry_path
from nightshift.supervisor.run.registry import RegistryRead, bad_line_bytes, bad_lines_note, forget, read_registry, remove


class PruneNeedsAnswer(UserError):
    """`ls --prune` without a terminal to ask in and without --yes."""


def cmd_ls(args) -> int:
    found = read_registry()
    if getattr(args, "prune", False):
        _prune(found, assume_yes=getattr(args, "yes", False))
        found = read_registry()
    if found.bad:
        print(f"nightshift: {bad_lines_note(found.bad)}", file=sys.stderr)
    if not found.runs:
        print("no runs yet; start one with `nightshift run` in a workspace")
        return 0
    _table(found)
    return 0


def _table(found: RegistryRead) -> None:
    from nightshift.supervisor.cli.watch.revive import crash_reason
    from nightshift.supervisor.cli.watch.status import _age
    from nightshift.supervisor.run.liveness import supervisor_status
    from nightshift.supervisor.run.paths import RunPaths
    from nightshift.supervisor.run.state import load_state

    print(f"{'RUN':24} {'STATUS':12} {'SHIFT':>5} {'COST':>8} {'AGE':>6}  WORKSPACE")
    starred = False  # the legend explains a star only when a row has one
    for entry in found.runs:
        if not entry["exists"]:
            status, why = ("missing", "run dir gone") if entry["gone"] else ("half-written", "no event log yet")
            print(f"{entry['run_id']:24} {status:12} {'':>5} {'':>8} {'':>6}  {entry['workspace']} ({why})")
            continue
        run = RunPaths(Path(entry["run_dir"]))
        state, _, _ = load_state(run.root)
        status = "WAITING" if state.get("waiting_for") else state["status"]
        if state["phase"] != "finished" and not supervisor_status(run.supervisor)["alive"]:
            status = ("crashed" if crash_reason(run, state) else status) + "*"
            starred = True
        from nightshift.supervisor.fleet.state import lane_rows
        lanes = lane_rows(run.root)
        print(f"{entry['run_id']:24} {status:12} {state['shift']:>5} {state['cost_usd']:>8.2f} "
              f"{_age(state['last_event_ts']):>6}  {entry['workspace']}" + (f" ({len(lanes)} lanes)" if lanes else ""))
    if starred:
        print("* no live supervisor: `nightshift resume RUN`")
    if found.dead():
        print("missing: the run's folder is gone; `nightshift forget RUN` or `nightshift ls --prune` drops it")


def _prune(found: RegistryRead, assume_yes: bool) -> None:
    dead, bad = found.dead(), found.bad
    if not dead and not bad:
        print("nothing to prune: every registered run's folder is there")
        return
    count = len(dead) + len(bad)
    if not assume_yes and not sys.stdin.isatty():
        raise PruneNeedsAnswer(f"ls --prune would drop {count} entr{'y' if count == 1 else 'ies'} from "
                               f"{registry_path()} and asks first; add --yes to drop them without asking")
    for entry in dead:
        print(f"  {entry['run_id']}  {entry['workspace']} (run dir gone)")
    if bad:
        print(f"  {len(bad)} unreadable line{'s' if len(bad) != 1 else ''} (line{'s' if len(bad) != 1 else ''} "
              f"{', '.join(str(n) for n in bad[:10])})")
    if not assume_yes:
        try:
            answer = input(f"Drop {'this' if count == 1 else 'these'} from the registry of runs? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing dropped")
            return
    dropped = remove({entry["run_id"] for entry in dead}, bad_line_bytes(bad))
    print(f"dropped {dropped} line{'s' if dropped != 1 else ''} from {registry_path()}")


def cmd_forget(args) -> int:
    entry = forget(args.run)
    print(f"forgot run {entry['run_id']} ({entry['workspace']}, run dir gone)")
    return 0
