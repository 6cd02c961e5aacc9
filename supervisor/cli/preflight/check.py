"""`nightshift check [DIR]`: the preflight on its own; and the preflight `nightshift run` / `submit` run before they
detach, whose result becomes the run's first record after its creation: ``preflight.finished`` with today's
oracle figures (the starting point of the accuracy history, before the agent's first change) and
``tests.baseline`` (the test ratchet's starting set), or
``preflight.skipped`` when the user started with ``--no-check``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from nightshift.supervisor.cli.preflight.screen import Preflight, row, run_preflight
from nightshift.supervisor.cli.progress import say
from nightshift.supervisor.errors import UserError


class PreflightFailed(UserError):
    pass


def check_main(workspace: Path, agent_turn: bool = False, job: bool = False) -> int:
    workspace = Path(workspace).resolve()
    if not workspace.is_dir():
        raise UserError(f"workspace {workspace} does not exist; give an existing folder")
    # Each line as its check finishes (a suite run twice takes minutes); recorded nowhere: the held-out tests' ids
    # (check_only) may be shown.
    preflight = run_preflight(workspace, agent_turn=agent_turn, job=job,
                              on_line=lambda line: say(row(line, check_only=True)))
    say(preflight.verdict())
    shutil.rmtree(preflight.out_dir, ignore_errors=True)
    return 1 if preflight.failed else 0


def preflight_for_start(workspace: Path, backend: str | None = None, agent: str | None = None) -> Preflight:
    """The preflight before a run is created; PreflightFailed (one line, after the screen) when a run would
    fail. Its output is kept in the workspace state folder until the run takes it."""
    from nightshift.supervisor.run.paths import make_private_dir, workspace_state_dir

    out_dir = make_private_dir(workspace_state_dir(Path(workspace).resolve())) / "preflight"
    preflight = run_preflight(workspace, out_dir=out_dir, backend=backend, agent=agent)
    if preflight.failed:
        print(preflight.render())
        raise PreflightFailed(f"the preflight found {len(preflight.problems())} problem(s) (above), so no run was "
                              "started; fix them, or start anyway with --no-check")
    return preflight


def record_preflight(run, preflight: Preflight | None, say=print) -> None:
    """The run's log keeps what the preflight found (or that it was skipped), right after run.created."""
    from nightshift.supervisor.run.events import EventLog

    log = EventLog(run.events, last_seq=_last_seq(run))
    try:
        if preflight is None:
            log.append("preflight.skipped", None, reason="started with --no-check")
            say("preflight: skipped (--no-check); recorded in the run's log")
            return
        kept = run.root / "preflight"
        if preflight.out_dir.exists():
            shutil.move(str(preflight.out_dir), kept)
        data = preflight.event_data()
        data["report"] = str(kept / "oracle" / "oracle.json") if (kept / "oracle").exists() else None
        log.append("preflight.finished", None, **data)
        if preflight.tests is not None:  # the ratchet starts here, before the agent's first turn
            log.append("tests.baseline", None, **preflight.tests)
    finally:
        log.close()
    say(preflight.render())


def _last_seq(run) -> int:
    from nightshift.supervisor.run.state import load_state

    return load_state(run.root)[0]["seq"]


__all__ = ["check_main", "preflight_for_start", "record_preflight", "PreflightFailed"]
