"""The agent's side of a shift: launching a turn (or adopting one a crashed supervisor left running), waiting
for its stop (Stop hook, exit, a dead pane, a batch job that ended, a timeout), and reaching the live session:
a push-back through the hook's answer or typed into the pane, a nudge, the wrap-up, the end of the session.

Launching is idempotent (a turn has a deterministic name and a ``started`` marker), so a restarted supervisor
adopts a live agent instead of launching it twice.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, Callable

from nightshift.supervisor.agents import make_agent
from nightshift.supervisor.agents.base import StopInfo, TurnContext
from nightshift.supervisor.backends import make_backend
from nightshift.supervisor.backends.base import read_exit
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.resources import render
from nightshift.supervisor.run.liveness import processes_of_shift
from nightshift.supervisor.shift import stop_channel
from nightshift.supervisor.shift.ledger import RunLedger
from nightshift.supervisor.shift.stall import StallWatch, on_stall
from nightshift.supervisor.shift.policy import compile_policy, sandbox_problem, write_policy
from nightshift.supervisor.shift.pretool_transport import pretool_transport
from nightshift.supervisor.shift.turn_boundary import TurnBoundary
from nightshift.supervisor.shift.session_waits import SCREEN_CHECK_SECONDS, HumanWaits
from nightshift.supervisor.shift.turns import launch_spec, orientation_prompt, write_private

ALIVE_CHECK_SECONDS = 5.0


class AgentSession(HumanWaits):
    def __init__(self, ledger: RunLedger, config: Config, say=print):
        self.ledger, self.config, self.say = ledger, config, say
        self.run_paths = ledger.run_paths
        self.agent = make_agent(config.agent.kind, config.agent.mode, config.agent.command or "")
        self.backend = make_backend(config.backend.kind, config, self.run_paths)
        self.pending_request: str | None = None  # the Stop hook waiting for our answer, if any
        self.sandbox: str | None = None  # None until probed; "" when Claude Code's sandbox runs, else the reason
        self.boundary = TurnBoundary(ledger, config, self.agent)  # nightshift's namespace around every turn
        self._waiting_since: float | None = None
        self._screen_saw_wait = False  # only a prompt the screen has shown can be seen going away there
        self._answered_on_screen = False  # keys sent to a prompt; the screen may still show it for a moment
        self._stops_seen: int | None = None  # mtime of stops/ at the last sweep for foreign requests

    @property
    def state(self) -> dict[str, Any]:
        return self.ledger.state

    def ctx(self, turn: int | None = None) -> TurnContext:
        s = self.state
        turn = s["turn"] if turn is None else turn
        return TurnContext(run=self.run_paths, config=self.config, shift=s["shift"], turn=turn,
                           prompt_file=self.run_paths.turn_file(s["shift"], turn, "prompt.md"), fresh=turn == 1,
                           token=s["token"] or "", session_id=(s["last_stop"] or {}).get("session_id"),
                           log_file=self.run_paths.turn_file(s["shift"], turn, "log"))

    # ----- launching ------------------------------------------------------------------------------
    def launch_refusal(self) -> str | None:
        """Probe the sandbox once per supervisor (an event says what holds the shell); the reason to hold the run
        when [policy] sandbox = "required" and it cannot run, or when the agent cannot start as configured."""
        if self.sandbox is None:  # Claude Code's own sandbox: an optional second layer inside the namespace
            wanted = self.config.policy.claude_sandbox and self.config.agent.kind == "claude"
            self.sandbox = (sandbox_problem() or "") if wanted else "off in [policy]"
            self.boundary.announce(claude_sandbox=not self.sandbox)
        problem = self.agent.launch_problem(self.config) or self.boundary.refusal()
        if problem:
            self.sandbox = None  # probed again after `nightshift resume`
        return problem

    def refresh_policy(self) -> None:
        """The hooks' rules again, with the tests that passed since the turn was launched (a live interactive
        session keeps its mounts; its PreToolUse hook reads the new policy at its next call)."""
        write_policy(self.run_paths, compile_policy(self.run_paths, self.config, self.ledger.held_tests(),
                                                    sandbox=not self.sandbox))

    def launch_turn(self) -> None:
        ctx = self.ctx(self.state["launch_turn"])
        if not ctx.prompt_file.exists():
            write_private(ctx.prompt_file, orientation_prompt(self.run_paths.run_id, ctx.shift, self.config.goal, None))
        # The boundary is compiled afresh at every turn: tests that passed since the last one are protected too.
        ctx.policy = compile_policy(self.run_paths, self.config, self.ledger.held_tests(), sandbox=not self.sandbox)
        write_policy(self.run_paths, ctx.policy)
        ctx.pretool = pretool_transport(self.config).kind
        spec = launch_spec(ctx, self.agent.command(ctx), self.agent.env(ctx))
        target = self.backend.find(spec)
        if target is not None:
            target = {**target, "exit_file": str(spec.exit_file)}
        if target is not None or spec.started_file.exists():
            # Started before a crash: adopt it (alive) or let the wait read its exit file (or call it lost). Its
            # settings stay as they are: written again, the HTTP hook's URL would be the placeholder's.
            self.ledger.emit("agent.adopted", ctx.shift, turn=ctx.turn, target=target)
            return
        self.agent.prepare(ctx)
        http_settings = self.agent.settings_file(ctx) if ctx.pretool == "http" else None
        self.boundary.wrap(spec, self.ledger.held_tests(), http_settings)
        previous = self.state["target"]
        target = {**self.backend.launch(spec), "exit_file": str(spec.exit_file)}
        self.ledger.emit("agent.started", ctx.shift, turn=ctx.turn, target=target, prompt_file=str(ctx.prompt_file))
        if previous:  # the ended turn's window (kept by remain-on-exit; its screen is in its log) would pile up
            self.backend.terminate(previous)

    # ----- waiting for a stop ---------------------------------------------------------------------
    def wait_for_stop(self, tick: Callable[[], None], sleep: Callable[[], None], stopping: Callable[[], bool],
                      on_dialog: Callable[[str], None], on_waiting: Callable[[str], None]) -> StopInfo:
        ctx = self.ctx()
        spec = launch_spec(ctx, "", {})
        target = self.state["target"]
        if target and target.get("exit_file"):
            spec.exit_file = Path(target["exit_file"])  # a live session's process belongs to an earlier turn
        began = time.monotonic()
        screen_checked = alive_checked = 0.0
        stall = StallWatch(self.config.limits.stall_after, ctx.log_file)
        while True:
            tick()
            if stopping():
                self.release()
                return StopInfo(reason="stopped")
            self.record_boundary(on_waiting)
            exit_code = read_exit(spec)
            if self.agent.hook_driven:
                request = self.take_hook_request()
                if request is not None:
                    turn = self.state["launch_turn"] or ctx.turn
                    lost = self.boundary.helper_lost(ctx.shift, turn)
                    self.boundary.record_after_stop(ctx.shift, turn)
                    stop = self.agent.read_hook_stop(ctx, request)
                    stop.reason = "hook"
                    if lost:  # every later tool call of this session would be refused: end it (issue 30)
                        stop_channel.answer(self.run_paths.stops, request["id"], "allow")
                        self.backend.terminate(target)
                        stop.reason, stop.error = "helper_lost", "the tool-call decision helper ended mid-session"
                        return stop
                    self.pending_request = request["id"]
                    return stop
            if exit_code is not None:
                self.boundary.record_after_stop(ctx.shift, self.state["launch_turn"] or ctx.turn)
                return self.agent.read_stop(ctx, exit_code)
            # A turn normally ends with its exit file (inotify wakes us); liveness only catches a killed pane and
            # costs a tmux call (~5 ms CPU), so it is asked every few seconds, not at every wake-up.
            if time.monotonic() - alive_checked >= ALIVE_CHECK_SECONDS:
                alive_checked = time.monotonic()
                alive = target is not None and self.backend.is_alive(target)
                self.record_backend_changes()
            else:
                alive = target is not None
            if not alive:
                return self._ended_without_hook(ctx, spec, target)
            if self.backend.kind == "slurm" and (self.state.get("slurm") or {}).get("state") != "RUNNING":
                stall.reset()  # a job waiting in the queue is silent, not stalled
            stalled = stall.check()
            if stalled:
                ended = on_stall(self, stalled, stall, ctx, target)
                if ended:
                    return ended
            if time.monotonic() - began > self.config.agent.turn_timeout:
                self.backend.terminate(target)
                return StopInfo(reason="timeout", error=f"turn exceeded {self.config.agent.turn_timeout:.0f}s")
            if self.ledger.hours_used() > self.config.limits.max_hours:
                self.send_wrapup("the run's time budget is spent")
                self.backend.terminate(target)
                return StopInfo(reason="budget", error="max_hours reached")
            if self.agent.hook_driven and time.monotonic() - screen_checked > SCREEN_CHECK_SECONDS:
                screen_checked = time.monotonic()
                screen = self.backend.capture(target)
                problem = self.agent.check_screen(screen)
                if problem:
                    on_dialog(problem)
                self.watch_screen(screen, on_waiting)
            sleep()

    def _ended_without_hook(self, ctx: TurnContext, spec, target: dict[str, Any] | None) -> StopInfo:
        time.sleep(0.2)  # the wrapper writes the exit file just after the agent ends
        exit_code = read_exit(spec)
        if exit_code is not None:
            self.boundary.record_after_stop(ctx.shift, self.state["launch_turn"] or ctx.turn)
            return self.agent.read_stop(ctx, exit_code)
        end = self.backend.describe_end(target) if target and hasattr(self.backend, "describe_end") else None
        if end:  # a batch job that ended by itself: walltime, preemption, a failed job...
            self.say(f"shift {ctx.shift}: {end['error']}")
            return StopInfo(reason=end["reason"], error=end["error"])
        self.say(f"shift {ctx.shift}: the agent's process is gone without an exit status (pane killed?)")
        self.end_orphans(ctx)
        return StopInfo(reason="lost", error="the agent's pane or process disappeared without an exit status")

    def end_orphans(self, ctx: TurnContext) -> None:
        """A lost turn's processes that outlived their pane (its tmux server died; they ignored SIGHUP) would go
        on working beside the next shift's agent: end them, found by the shift's marks in their environment."""
        for pid in processes_of_shift(self.run_paths.root, ctx.shift):
            try:
                os.kill(pid, signal.SIGKILL)
                self.say(f"shift {ctx.shift}: ended process {pid} left over from the lost turn {ctx.turn}")
            except OSError:
                pass

    def record_backend_changes(self) -> None:
        """Backend news (Slurm job state changes) as events, for the TUI and `nightshift log`."""
        take = getattr(self.backend, "take_changes", None)
        for change in take() if take else []:
            self.ledger.emit("slurm.job_changed", self.state["shift"], **change)

    def settle(self) -> None:
        """The last states of the run's batch jobs: a short job can end between two polls."""
        settle = getattr(self.backend, "settle", None)
        if settle is not None:
            settle()
            self.record_backend_changes()

    def take_hook_request(self) -> dict[str, Any] | None:
        stops = self.run_paths.stops
        for note in stop_channel.released(stops):
            self.ledger.emit("agent.released", self.state["shift"] or None, request_id=note.get("id"),
                             why=note.get("why"))
        for request in stop_channel.pending(stops):
            if request.get("token") == self.state["token"] and request.get("token"):
                return request
            stop_channel.answer(stops, request["id"], "allow")  # not a session of this shift
        return None

    # ----- the boundary: refusals and waits for a human ---------------------------------------------
    def answer_foreign_stops(self) -> None:
        """Let every Stop-hook request go at once that this run will never answer: a wrong token, or any request
        in a run whose agent is not hook-driven (a demo or command run), so no session waits out the timeout."""
        try:
            seen = os.stat(self.run_paths.stops).st_mtime_ns
        except OSError:
            return
        if seen == self._stops_seen:  # nothing posted since the last sweep: no listing of a long run's stops
            return
        self._stops_seen = seen
        token = self.state["token"] if self.agent.hook_driven else None
        for request in stop_channel.pending(self.run_paths.stops):
            if not token or request.get("token") != token:
                stop_channel.answer(self.run_paths.stops, request["id"], "allow")

    # ----- reaching the live session --------------------------------------------------------------
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

    def deliver_nudge_now(self, message: str) -> bool:
        """An idle interactive agent (its hook already let it stop) gets the nudge typed in at once."""
        target = self.state["target"]
        if self.agent.hook_driven and target and self.state["phase"] == "agent" and self.pending_request is None:
            screen = self.backend.capture(target)
            return self.agent.is_idle(screen) and self.backend.send_text(target, f"Message from the human: {message}")
        return False

    def send_wrapup(self, why: str) -> None:
        target = self.state["target"]
        if target and self.agent.hook_driven:
            self.backend.send_text(target, render("wrapup.md", why=why))

    def release(self) -> None:
        """Let a waiting hook go and end the agent's process, if any."""
        if self.pending_request:
            stop_channel.answer(self.run_paths.stops, self.pending_request, "allow")
            self.pending_request = None
        target = self.state.get("target")
        if target:
            self.backend.terminate(target)
