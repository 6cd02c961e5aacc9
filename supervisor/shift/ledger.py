"""The run's ledger, held by the one supervisor of a run: the run lock, the event log and its snapshot (every
event folded into the state as it is written), the heartbeat, the inbox, and the small records a verdict
leaves between stops (the tests that have passed, the plan's items).
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from datetime import datetime, timezone
from typing import Any

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run import inbox
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.liveness import HEARTBEAT_SECONDS, beat, write_supervisor_info
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.registry import live_runs
from nightshift.supervisor.run.state import apply, load_state, write_snapshot
from nightshift.supervisor.shift.workspace_lock import WorkspaceBusy, hold_workspace

# Tests set this to an event type to kill -9 the supervisor right after recording it.
_CRASH_AFTER = os.environ.get("NIGHTSHIFT_TEST_CRASH_AFTER", "")
# Tests set this to widen the moment between "is another run live here?" and this supervisor recording itself, where
# two supervisors starting at once used to both find none (the workspace lock closes it).
_SLOW_START = float(os.environ.get("NIGHTSHIFT_TEST_SLOW_START", "0") or 0)


class AlreadySupervised(UserError):
    pass


class RunLedger:
    def __init__(self, run: RunPaths):
        self.run_paths = run
        self.state: dict[str, Any] = {}
        self.log: EventLog | None = None
        self._lock_fd: int | None = None
        self._workspace_fd: int | None = None
        self._last_beat = 0.0
        self._created, self._start = "", 0.0  # the run's creation time, as written and as a timestamp

    def open(self) -> list[str]:
        """Take the run lock, fold the log, record this supervisor; the warnings of a repaired log."""
        self._lock_fd = os.open(self.run_paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = self.run_paths.supervisor.read_text() if self.run_paths.supervisor.exists() else "{}"
            who = json.loads(info or "{}")
            run_id = self.run_paths.run_id
            raise AlreadySupervised(f"run {run_id} is already supervised (pid {who.get('pid')} on {who.get('host')}); "
                                    f"use `nightshift status {run_id}` or `nightshift stop {run_id}`") from None
        try:  # one supervisor per workspace, even when two start at once (see workspace_lock.py)
            self._workspace_fd = hold_workspace(self.run_paths.workspace, self.run_paths.run_id)
        except WorkspaceBusy:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise
        others = live_runs(self.run_paths.workspace, exclude=self.run_paths.run_id)  # a host without flock
        if others:
            os.close(self._lock_fd)
            os.close(self._workspace_fd)
            self._lock_fd = self._workspace_fd = None
            raise AlreadySupervised(f"run {others[0]['run_id']} is live in this workspace (pid {others[0]['pid']}); "
                                    f"one run at a time: `nightshift stop {others[0]['run_id']}` first")
        if _SLOW_START:
            time.sleep(_SLOW_START)
        # The log's torn tail is cut before the fold, so the state and the next seq come from whole events only.
        self.log = EventLog(self.run_paths.events, last_seq=0)
        self.state, _, warnings = load_state(self.run_paths.root)
        self.log.seq = self.state["seq"]
        write_supervisor_info(self.run_paths.supervisor)
        return self.log.warnings + warnings

    def close(self) -> None:
        try:
            info = json.loads(self.run_paths.supervisor.read_text())
            info["stopped"] = time.time()
            self.run_paths.supervisor.write_text(json.dumps(info))
        except (OSError, ValueError):
            pass
        if self.log is not None:
            self.log.close()
        if self._workspace_fd is not None:  # first: whoever takes the run lock next finds the workspace free
            os.close(self._workspace_fd)
            self._workspace_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    def emit(self, type_: str, shift: int | None = None, **data: Any) -> dict[str, Any]:
        event = self.log.append(type_, shift, **data)
        apply(self.state, event)
        write_snapshot(self.run_paths.snapshot, self.state, os.lseek(self.log._fd, 0, os.SEEK_END))
        if _CRASH_AFTER and _CRASH_AFTER == type_:
            os.kill(os.getpid(), signal.SIGKILL)  # test hook: a real kill -9 at a precise point of the loop
        return event

    def beat(self) -> None:
        """The heartbeat other hosts read (supervisor.json's mtime), at most every HEARTBEAT_SECONDS."""
        now = time.monotonic()
        if now - self._last_beat > HEARTBEAT_SECONDS:
            beat(self.run_paths.supervisor)
            self._last_beat = now

    def take_commands(self) -> list[dict[str, Any]]:
        return inbox.take_commands(self.run_paths)

    def hours_used(self) -> float:
        created = self.state["created"]
        if not created:
            return 0.0
        if self._created != created:  # asked at every wake-up of the wait loop: parsed once
            self._created = created
            self._start = datetime.strptime(created, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
        return (time.time() - self._start) / 3600.0

    def judge_spent(self) -> float:
        return float(self.state.get("judge_cost_usd") or 0.0)

    # ----- records kept between verdicts ----------------------------------------------------------
    def passed_tests(self) -> set[str]:
        """The test ratchet's set: what passed when the run began and at any verdict since, less what a person
        released (shift/ratchet.py)."""
        from nightshift.supervisor.shift.ratchet import kept
        return kept(self.state, self.recorded_tests())

    def held_tests(self) -> set[str]:
        """Every test whose file is kept: the ratchet's set and each test collected when the run began, the goal's
        failing tests among them (shift/ratchet.py)."""
        from nightshift.supervisor.shift.ratchet import held
        return held(self.state, self.recorded_tests())

    def test_sets(self) -> tuple[set[str], set[str]]:
        """(passed_tests(), held_tests()) from one reading of tests-passed.json: a verdict's context takes both."""
        from nightshift.supervisor.shift.ratchet import held, kept
        recorded = self.recorded_tests()
        return kept(self.state, recorded), held(self.state, recorded)

    def goal_tests(self) -> set[str]:
        """The goal's tests: failing when the run began, not released."""
        from nightshift.supervisor.shift.ratchet import goal
        return goal(self.state)

    def baseline_tests(self) -> set[str]:
        """Of the ratchet's set, what passed when the run began."""
        from nightshift.supervisor.shift.ratchet import at_start
        return at_start(self.state)

    def recorded_tests(self) -> set[str]:
        """What passed at a verdict of this run (kept between verdicts in tests-passed.json)."""
        return set(self._record("tests-passed.json") or [])

    def plan_known(self) -> dict[str, bool]:
        known = self._record("plan-known.json")
        if known is None:
            from nightshift.supervisor.verify.checks import plan_items
            claude_md = self.run_paths.workspace / "CLAUDE.md"
            # Agent-written text: never trusted to be UTF-8.
            known = plan_items(claude_md.read_text(errors="replace")) if claude_md.exists() else {}
        return known

    def prerun(self) -> dict[str, str]:
        """The user's dirty or untracked paths when the run began (see gitops.commit_changes)."""
        return self._record("prerun.json") or {}

    def remember_verdict(self, verdict: Any) -> None:
        self._write_record("tests-passed.json", sorted(self.recorded_tests() | set(verdict.passed_tests)))
        self.remember_plan({**self.plan_known(), **verdict.plan})

    def remember_plan(self, known: dict[str, bool]) -> None:
        self._write_record("plan-known.json", known)

    def _record(self, name: str) -> Any:
        try:
            return json.loads((self.run_paths.root / name).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _write_record(self, name: str, value: Any) -> None:
        path = self.run_paths.root / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(json.dumps(value))
        os.replace(tmp, path)
