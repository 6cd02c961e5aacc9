"""What the shift loop stands on: the run lock, the event log and snapshot, the heartbeat, the inbox, the
Stop-hook channel, pausing and finishing, and the small records a verdict leaves (tests that passed, plan items).
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from datetime import datetime, timezone
from typing import Any

from supervisor import gitops
from supervisor.run import inbox
from supervisor.shift import stop_channel
from supervisor.config.schema import Config
from supervisor.run.events import EventLog
from supervisor.run.liveness import HEARTBEAT_SECONDS, beat, write_supervisor_info
from supervisor.run.notify import notify
from supervisor.run.paths import RunPaths
from supervisor.resources import render
from supervisor.run.state import apply, load_state, write_snapshot
from supervisor.run.watch import Waker
from supervisor.errors import UserError

# Tests set this to an event type to kill -9 the supervisor right after recording it.
_CRASH_AFTER = os.environ.get("NIGHTSHIFT_TEST_CRASH_AFTER", "")


class AlreadySupervised(UserError):
    pass


class RunRuntime:
    backend: Any
    agent: Any

    def __init__(self, run: RunPaths, config: Config, say=print):
        self.run_paths, self.config, self.say = run, config, say
        self.state: dict[str, Any] = {}
        self.stop_requested = False
        self.pending_request: str | None = None
        self._lock_fd: int | None = None
        self._last_beat = 0.0
        self.waker: Waker | None = None
        self.repo = gitops.open_repo(run.workspace)

    # ----- lifecycle ------------------------------------------------------------------------------
    def open(self) -> None:
        self._lock_fd = os.open(self.run_paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = self.run_paths.supervisor.read_text() if self.run_paths.supervisor.exists() else "{}"
            who = json.loads(info or "{}")
            raise AlreadySupervised(
                f"run {self.run_paths.run_id} is already supervised (pid {who.get('pid')} on {who.get('host')}); "
                f"use `nightshift status {self.run_paths.run_id}` or `nightshift stop {self.run_paths.run_id}`") from None
        self.state, offset, warnings = load_state(self.run_paths.root)
        self.log = EventLog(self.run_paths.events, last_seq=self.state["seq"])
        for warning in warnings + self.log.warnings:
            self.say(f"warning: {warning}")
        write_supervisor_info(self.run_paths.supervisor)
        self.pending_request = (self.state["last_stop"] or {}).get("request_id")
        self.waker = Waker([self.run_paths.inbox, self.run_paths.stops, self.run_paths.shifts])
        self.emit("supervisor.started", self.state["shift"] or None, pid=os.getpid(), phase=self.state["phase"])

    def close(self) -> None:
        if self.waker:
            self.waker.stop()
        try:
            info = json.loads(self.run_paths.supervisor.read_text())
            info["stopped"] = time.time()
            self.run_paths.supervisor.write_text(json.dumps(info))
        except (OSError, ValueError):
            pass
        self.log.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    def emit(self, type_: str, shift: int | None = None, **data: Any) -> dict[str, Any]:
        event = self.log.append(type_, shift, **data)
        apply(self.state, event)
        write_snapshot(self.run_paths.snapshot, self.state, os.lseek(self.log._fd, 0, os.SEEK_END))
        if _CRASH_AFTER and _CRASH_AFTER == type_:
            os.kill(os.getpid(), signal.SIGKILL)  # test hook: a real kill -9 at a precise point of the loop
        return event

    def sleep(self) -> None:
        self.waker.wait(self.waker.interval)

    def tick(self) -> None:
        now = time.monotonic()
        if now - self._last_beat > HEARTBEAT_SECONDS:
            beat(self.run_paths.supervisor)
            self._last_beat = now
        for command in inbox.take_commands(self.run_paths):
            self.handle_command(command)
            inbox.done_with(command)

    # ----- commands from the inbox ----------------------------------------------------------------
    def handle_command(self, command: dict[str, Any]) -> None:
        verb, args, cid = command.get("verb"), command.get("args") or {}, command.get("id")
        shift = self.state["shift"] or None
        if self.state["phase"] == "finished":
            self.emit("command.rejected", shift, id=cid, verb=verb, reason="the run has finished")
        elif verb == "pause":
            if self.state["paused"]:
                self.emit("command.rejected", shift, id=cid, verb=verb, reason="already paused")
                return
            self.emit("command.accepted", shift, id=cid, verb=verb)
            self.pause("user", "paused by the user; the agent finishes its current turn", notify_kind=None)
        elif verb == "resume":
            if not self.state["paused"]:
                self.emit("command.rejected", shift, id=cid, verb=verb, reason="the run is not paused")
                return
            self.emit("command.accepted", shift, id=cid, verb=verb)
            self.emit("run.resumed", shift, by="user", reset_breaker=True)
        elif verb == "stop":
            self.emit("command.accepted", shift, id=cid, verb=verb)
            self.stop_requested = True
        elif verb == "nudge" and str(args.get("message", "")).strip():
            self.emit("command.accepted", shift, id=cid, verb=verb, args={"message": str(args["message"])[:4000]})
            self.deliver_nudge_now(str(args["message"]))
        else:
            self.emit("command.rejected", shift, id=cid, verb=verb, reason=f"unknown or empty command {verb!r}")

    def deliver_nudge_now(self, message: str) -> None:
        """An idle interactive agent (its hook already let it stop) gets the nudge typed in at once."""
        target = self.state["target"]
        if self.agent.hook_driven and target and self.state["phase"] == "agent" and self.pending_request is None:
            screen = self.backend.capture(target)
            if self.agent.is_idle(screen) and self.backend.send_text(target, f"Message from the human: {message}"):
                self.emit("nudge.delivered", self.state["shift"], how="typed")

    # ----- pausing, finishing ---------------------------------------------------------------------
    def pause(self, kind: str, reason: str, notify_kind: str | None = "paused") -> None:
        if not self.state["paused"]:
            self.emit("run.paused", self.state["shift"] or None, reason=reason, kind=kind)
        self.say(f"run paused: {reason}")
        if notify_kind:
            self.tell_human(kind if kind in ("breaker", "blocked") else notify_kind, reason)

    def pause_for_budget(self, what: str, limit: float, value: float) -> None:
        self.emit("budget.exceeded", self.state["shift"] or None, what=what, limit=limit, value=value)
        self.release_agent()
        self.pause("budget", f"budget spent: {what} = {value} (limit {limit}); raise limits.{what} in "
                             f"{self.run_paths.config} and `nightshift resume {self.run_paths.run_id}`")

    def wait_while_paused(self) -> None:
        while self.state["paused"] and not self.stop_requested:
            self.tick()
            self.sleep()

    def finish(self, outcome: str, reason: str) -> None:
        self.release_agent()
        settle = getattr(getattr(self, "backend", None), "settle", None)
        if settle is not None:  # the last states of the run's batch jobs: a short job can end between two polls
            settle()
            self.record_backend_changes()
        self.emit("run.finished", self.state["shift"] or None, outcome=outcome, reason=reason)
        self.say(f"run {outcome}: {reason}")
        self.tell_human("done" if outcome == "done" else "failed" if outcome == "failed" else "paused", reason)

    def tell_human(self, kind: str, message: str) -> None:
        cfg = self.config.notify
        if cfg.command and kind in cfg.on:
            error = notify(cfg.command, kind, self.run_paths.run_id, message)
            if error:
                self.emit("notify.failed", self.state["shift"] or None, error=error)

    # ----- the agent's session --------------------------------------------------------------------
    def take_hook_request(self) -> dict[str, Any] | None:
        for note in stop_channel.released(self.run_paths.stops):
            self.emit("agent.released", self.state["shift"] or None, request_id=note.get("id"), why=note.get("why"))
        for request in stop_channel.pending(self.run_paths.stops):
            if request.get("token") == self.state["token"] and request.get("token"):
                return request
            stop_channel.answer(self.run_paths.stops, request["id"], "allow")  # not a session of this shift
        return None

    def deliver_live(self, text: str) -> str | None:
        """Push back into a live interactive session: the hook's block answer, else typed into the pane."""
        if self.pending_request and stop_channel.was_released(self.run_paths.stops, self.pending_request):
            self.pending_request = None  # the hook gave up waiting and let the agent stop: type instead
        if self.pending_request:
            stop_channel.answer(self.run_paths.stops, self.pending_request, "block", text)
            self.pending_request = None
            return "hook"
        target = self.state["target"]
        if target and self.backend.is_alive(target) and self.backend.send_text(target, text):
            return "typed"
        return None

    def release_agent(self) -> None:
        """Let a waiting hook go and end the agent's process, if any."""
        if self.pending_request:
            stop_channel.answer(self.run_paths.stops, self.pending_request, "allow")
            self.pending_request = None
        target = self.state.get("target")
        if target:
            self.backend.terminate(target)

    def send_wrapup(self, why: str) -> None:
        target = self.state["target"]
        if target and self.agent.hook_driven:
            self.backend.send_text(target, render("wrapup.md", why=why))

    def check_screen(self, target: dict[str, Any]) -> None:
        problem = self.agent.check_screen(self.backend.capture(target))
        if problem and not self.state["paused"]:
            self.pause("dialog", problem)

    # ----- records kept between verdicts ----------------------------------------------------------
    def hours_used(self) -> float:
        created = self.state["created"]
        if not created:
            return 0.0
        start = datetime.strptime(created, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
        return (time.time() - start) / 3600.0

    def findings(self) -> str:
        lines = []
        for check in self.state["last_verdict"].get("checks", []):
            if not check["passed"]:
                lines.append(f"- {check['summary']}")
                lines += [f"    {line}" for line in check.get("lines", [])]
        return "\n".join(lines) or "- every check passes, but you did not claim the goal is met"

    def improved(self) -> bool:
        """Is the newest verdict better than every earlier one (lower metric, or fewer failing checks)?"""
        history = self.state["metrics"]
        if not history:
            return False
        newest, earlier = history[-1]["metric"], [m["metric"] for m in history[:-1] if m["metric"] is not None]
        if newest is not None and (not earlier or newest < min(earlier)):
            return True
        failing = sum(1 for c in self.state["last_verdict"].get("checks", []) if not c["passed"])
        best = getattr(self, "_fewest_failing", None)
        self._fewest_failing = failing if best is None else min(best, failing)
        return best is not None and failing < best

    def _record(self, name: str) -> Any:
        path = self.run_paths.root / name
        try:
            return json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def passed_tests(self) -> set[str]:
        return set(self._record("tests-passed.json") or [])

    def plan_known(self) -> dict[str, bool]:
        known = self._record("plan-known.json")
        if known is None:
            from supervisor.verify.checks import plan_items
            claude_md = self.run_paths.workspace / "CLAUDE.md"
            known = plan_items(claude_md.read_text()) if claude_md.exists() else {}
        return known

    def remember_verdict(self, verdict: Any) -> None:
        self._write_record("tests-passed.json", sorted(self.passed_tests() | set(verdict.passed_tests)))
        self.remember_plan({**self.plan_known(), **verdict.plan})

    def remember_plan(self, known: dict[str, bool]) -> None:
        self._write_record("plan-known.json", known)

    def _write_record(self, name: str, value: Any) -> None:
        path = self.run_paths.root / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(json.dumps(value))
        os.replace(tmp, path)

    def judge_spent(self) -> float:
        return float(self.state.get("judge_cost_usd") or 0.0)
