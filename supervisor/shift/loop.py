"""The shift loop: a state machine driven by the event log, so a supervisor killed at any moment resumes.

Each step reads the folded state's ``phase`` and does the next thing, recording it as an event first:

  launching -> agent.started (or adopted)   agent -> agent.stopped    stopped -> verify.finished
  verified  -> commit.created/skipped       committed -> run.finished | run.paused | pushback.sent | shift.started

Launching is idempotent (a turn has a deterministic name and a ``started`` marker), so a restarted supervisor
adopts a live agent instead of launching it twice, and no shift is lost or counted twice.
"""
from __future__ import annotations

import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from supervisor import gitops
from supervisor.agents import make_agent
from supervisor.agents.base import StopInfo, TurnContext
from supervisor.backends import make_backend
from supervisor.backends.base import read_exit
from supervisor.config.schema import Config
from supervisor.run.paths import RunPaths
from supervisor.shift.ledger import RunRuntime
from supervisor.shift.turns import launch_spec, orientation_prompt, pushback_text, take_claim, write_private
from supervisor.verify.pipeline import StopContext, verify_stop


ALIVE_CHECK_SECONDS = 5.0
# Stops after which the agent's session is gone: the next turn is a fresh shift, oriented from the notes.
SESSION_ENDERS = ("lost", "timeout", "budget", "stopped", "walltime", "preempted", "cancelled", "job_failed",
                  "vanished", "job_ended")


class Supervisor(RunRuntime):
    def __init__(self, run: RunPaths, config: Config, say=print):
        super().__init__(run, config, say)
        self.agent = make_agent(config.agent.kind, config.agent.mode)
        self.backend = make_backend(config.backend.kind, config, run)

    # ----- the loop -------------------------------------------------------------------------------
    def run(self) -> int:
        self.open()
        try:
            if self.state["phase"] == "agent" and self.state["target"]:
                # A restart found the agent's turn under way: adopt it, never launch it a second time.
                target = self.state["target"]
                self.emit("agent.adopted", self.state["shift"], turn=self.state["turn"], target=target,
                          alive=self.backend.is_alive(target))
            while self.state["phase"] != "finished":
                self.step()
            return 0 if self.state["outcome"] == "done" else 1
        finally:
            self.close()

    def step(self) -> None:
        phase = self.state["phase"]
        if self.stop_requested and phase not in ("stopped", "verified"):
            return self.finish("stopped", "stopped by the user")
        if self.state["paused"] and phase in ("committed", "decided"):
            return self.wait_while_paused()
        if phase == "new":
            return self.start_run()
        if phase == "launching":
            return self.launch_turn()
        if phase == "agent":
            return self.record_stop(self.wait_for_stop())
        if phase == "stopped":
            return self.verify_or_wait()
        if phase == "verified":
            return self.commit()
        if phase == "committed":
            return self.decide()
        if phase == "decided":  # a shift ended and the next one was not yet started
            return self.start_shift()
        raise RuntimeError(f"unknown phase {phase!r} in the event log")

    def ctx(self, turn: int | None = None) -> TurnContext:
        s = self.state
        turn = s["turn"] if turn is None else turn
        return TurnContext(run=self.run_paths, config=self.config, shift=s["shift"], turn=turn,
                           prompt_file=self.run_paths.turn_file(s["shift"], turn, "prompt.md"), fresh=turn == 1,
                           token=s["token"] or "", session_id=(s["last_stop"] or {}).get("session_id"),
                           log_file=self.run_paths.turn_file(s["shift"], turn, "log"))

    def start_run(self) -> None:
        if self.config.oracle is not None and self.config.oracle.compare:
            from supervisor.verify.oracle import protect_references
            seeded = self.run_paths.workspace / ".nightshift" / "references"
            if seeded.is_dir() and not self.run_paths.references.exists():
                shutil.copytree(seeded, self.run_paths.references)  # hashes taken at `nightshift init`
            protect_references(self.config.oracle, self.run_paths.workspace, self.run_paths.references)
        self.remember_plan(self.plan_known())  # the plan as it stood when the run began
        self.start_shift()

    def start_shift(self) -> None:
        n = self.state["shift"] + 1
        if n > self.config.limits.max_shifts:
            return self.pause_for_budget("max_shifts", self.config.limits.max_shifts, n - 1)
        self.run_paths.shift_dir(n).mkdir(parents=True, exist_ok=True, mode=0o700)
        prompt = orientation_prompt(self.run_paths.run_id, n, self.config.goal, self.state["last_verdict"])
        prompt_file = write_private(self.run_paths.turn_file(n, 1, "prompt.md"), prompt)
        self.emit("shift.started", n, token=secrets.token_hex(16), base=gitops.head_sha(self.repo),
                  prompt_file=str(prompt_file))
        self.say(f"shift {n}: started ({self.config.agent.kind} agent, {self.backend.kind})")

    def launch_turn(self) -> None:
        ctx = self.ctx(self.state["launch_turn"])
        if not ctx.prompt_file.exists():
            write_private(ctx.prompt_file, orientation_prompt(self.run_paths.run_id, ctx.shift, self.config.goal, None))
        self.agent.prepare(ctx)
        spec = launch_spec(ctx, self.agent.command(ctx), self.agent.env(ctx))
        target = self.backend.find(spec)
        if target is not None:
            target = {**target, "exit_file": str(spec.exit_file)}
        if target is not None or spec.started_file.exists():
            # Started before a crash: adopt it (alive) or let the wait read its exit file (or call it lost).
            self.emit("agent.adopted", ctx.shift, turn=ctx.turn, target=target)
            return
        previous = self.state["target"]
        target = {**self.backend.launch(spec), "exit_file": str(spec.exit_file)}
        self.emit("agent.started", ctx.shift, turn=ctx.turn, target=target, prompt_file=str(ctx.prompt_file))
        if previous:  # the ended turn's window (kept by remain-on-exit; its screen is in its log) would pile up
            self.backend.terminate(previous)

    # ----- waiting for a stop ---------------------------------------------------------------------
    def wait_for_stop(self) -> StopInfo:
        ctx = self.ctx()
        spec = launch_spec(ctx, "", {})
        target = self.state["target"]
        if target and target.get("exit_file"):
            spec.exit_file = Path(target["exit_file"])  # a live session's process belongs to an earlier turn
        began = time.monotonic()
        screen_checked = alive_checked = 0.0
        while True:
            self.tick()
            if self.stop_requested:
                self.release_agent()
                return StopInfo(reason="stopped")
            exit_code = read_exit(spec)
            if self.agent.hook_driven:
                request = self.take_hook_request()
                if request is not None:
                    stop = self.agent.read_hook_stop(ctx, request)
                    stop.reason = "hook"
                    self.pending_request = request["id"]
                    return stop
            if exit_code is not None:
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
                time.sleep(0.2)  # the wrapper writes the exit file just after the agent ends
                exit_code = read_exit(spec)
                if exit_code is not None:
                    return self.agent.read_stop(ctx, exit_code)
                end = self.backend.describe_end(target) if target and hasattr(self.backend, "describe_end") else None
                if end:  # a batch job that ended by itself: walltime, preemption, a failed job...
                    self.say(f"shift {ctx.shift}: {end['error']}")
                    return StopInfo(reason=end["reason"], error=end["error"])
                self.say(f"shift {ctx.shift}: the agent's process is gone without an exit status (pane killed?)")
                return StopInfo(reason="lost", error="the agent's pane or process disappeared without an exit status")
            if time.monotonic() - began > self.config.agent.turn_timeout:
                self.backend.terminate(target)
                return StopInfo(reason="timeout", error=f"turn exceeded {self.config.agent.turn_timeout:.0f}s")
            if self.hours_used() > self.config.limits.max_hours:
                self.send_wrapup("the run's time budget is spent")
                self.backend.terminate(target)
                return StopInfo(reason="budget", error="max_hours reached")
            if self.agent.hook_driven and time.monotonic() - screen_checked > 5:
                screen_checked = time.monotonic()
                self.check_screen(target)
            self.sleep()

    def record_backend_changes(self) -> None:
        """Backend news (Slurm job state changes) as events, for the TUI and `nightshift log`."""
        take = getattr(self.backend, "take_changes", None)
        for change in take() if take else []:
            self.emit("slurm.job_changed", self.state["shift"], **change)

    def record_stop(self, stop: StopInfo) -> None:
        ctx = self.ctx()
        claim = take_claim(self.run_paths.root, ctx.shift, ctx.turn, ctx.token)
        data = stop.to_event()
        data.update(turn=ctx.turn, claim=claim, request_id=self.pending_request)
        self.emit("agent.stopped", ctx.shift, **data)
        claim_text = f", claims {claim['status']}: {claim['summary'][:80]}" if claim else ""
        self.say(f"shift {ctx.shift}: agent stopped ({stop.reason}{claim_text})")

    def verify_or_wait(self) -> None:
        stop = self.state["last_stop"] or {}
        if stop.get("wait_until"):
            return self.wait_out_limit(stop)
        ctx = self.ctx()
        self.emit("verify.started", ctx.shift, turn=ctx.turn)
        verdict = verify_stop(StopContext(
            run=self.run_paths, config=self.config, shift=ctx.shift, turn=ctx.turn, claim=stop.get("claim"),
            shift_base=self.state["shift_base"], accepted_base=self.state["accepted_base"],
            passed_before=self.passed_tests(), plan_known=self.plan_known(),
            judge_spent_usd=self.judge_spent()))
        self.remember_verdict(verdict)
        self.emit("verify.finished", ctx.shift, **verdict.event_data(ctx.turn))
        if verdict.judge and not verdict.judge.get("available"):
            self.emit("judge.unavailable", ctx.shift, turn=ctx.turn, error=verdict.judge.get("error"))
        self.say(f"shift {ctx.shift}: {verdict.summary}")

    def wait_out_limit(self, stop: dict[str, Any]) -> None:
        """An overload or usage limit: wait (not a shift, not a breaker count), then retry the same prompt."""
        until = float(stop["wait_until"])
        ctx = self.ctx()
        self.emit("agent.waiting", ctx.shift, until=until, reason=stop.get("error", "API limit"))
        self.say(f"shift {ctx.shift}: API limit ({stop.get('error')}); waiting until "
                 f"{time.strftime('%H:%M:%S', time.localtime(until))}")
        while time.time() < until and not self.stop_requested:
            self.tick()
            self.sleep()
        if self.stop_requested:
            return self.finish("stopped", "stopped by the user")
        nxt = ctx.turn + 1
        write_private(self.run_paths.turn_file(ctx.shift, nxt, "prompt.md"), ctx.prompt_file.read_text())
        self.emit("pushback.sent", ctx.shift, turn=nxt, mode="retry", delivery="launch", summary="retry after limit")

    def commit(self) -> None:
        ctx, verdict = self.ctx(), self.state["last_verdict"]
        verdict_word = "PASS" if verdict["passed"] else "FAIL"
        message = f"nightshift: shift {ctx.shift} turn {ctx.turn}: {verdict_word}\n\n{verdict['summary'][:1500]}"
        sha = gitops.commit_all(self.repo, message)
        stale = sha is None and not self.improved()
        kind = "commit.created" if sha else "commit.skipped"
        self.emit(kind, ctx.shift, turn=ctx.turn, sha=sha, head=gitops.head_sha(self.repo), passed=verdict["passed"],
                  stale=stale, message=message.splitlines()[0])

    # ----- deciding -------------------------------------------------------------------------------
    def decide(self) -> None:
        s, limits = self.state, self.config.limits
        verdict, stop = s["last_verdict"], s["last_stop"] or {}
        claim = verdict.get("claimed")
        if verdict["passed"] and claim == "done":
            self.release_agent()
            return self.finish("done", (stop.get("claim") or {}).get("summary", "verified"))
        if s["paused"]:
            return self.wait_while_paused()
        if claim == "blocked":
            self.release_agent()
            return self.pause("blocked", f"the agent is blocked: {(stop.get('claim') or {}).get('summary', '')}")
        if self.hours_used() > limits.max_hours:
            return self.pause_for_budget("max_hours", limits.max_hours, round(self.hours_used(), 2))
        if limits.max_cost_usd and s["cost_usd"] >= limits.max_cost_usd:
            return self.pause_for_budget("max_cost_usd", limits.max_cost_usd, round(s["cost_usd"], 4))
        if s["stale_stops"] >= limits.breaker_stops:
            self.emit("breaker.tripped", s["shift"], stops=s["stale_stops"],
                      reason=f"{s['stale_stops']} stops in a row with no diff and no better verdict")
            self.release_agent()
            return self.pause("breaker", f"breaker: {s['stale_stops']} stops with no change and no progress")
        text = pushback_text(self.findings(), claim, s["nudges"])
        if self.can_push_in_session(stop):
            return self.push_in_session(text)
        self.release_agent()
        self.emit("shift.ended", s["shift"], reason=self.shift_end_reason(stop))
        self.start_shift()

    def can_push_in_session(self, stop: dict[str, Any]) -> bool:
        s, cfg = self.state, self.config.agent
        if stop.get("reason") in SESSION_ENDERS:
            return False
        if s["pushbacks_in_shift"] >= cfg.max_pushbacks_per_shift:
            return False
        used = stop.get("context_tokens")
        if used and used >= cfg.context_reset_fraction * cfg.context_window:
            return False  # a context reset beats a push-back the agent has no room to act on
        return True

    def shift_end_reason(self, stop: dict[str, Any]) -> str:
        if stop.get("reason") in SESSION_ENDERS:
            return stop["reason"]
        if self.state["pushbacks_in_shift"] >= self.config.agent.max_pushbacks_per_shift:
            return "pushback_limit"
        return "context"

    def push_in_session(self, text: str) -> None:
        s = self.state
        nxt = s["turn"] + 1
        prompt_file = write_private(self.run_paths.turn_file(s["shift"], nxt, "prompt.md"), text)
        delivery = "launch"
        if self.agent.hook_driven:
            delivery = self.deliver_live(text)
            if delivery is None:  # the session is gone: start afresh
                self.emit("shift.ended", s["shift"], reason="session_gone")
                return self.start_shift()
        self.emit("pushback.sent", s["shift"], turn=nxt, mode="session", delivery=delivery,
                  prompt_file=str(prompt_file), summary=s["last_verdict"]["summary"][:300])
        self.say(f"shift {s['shift']}: pushed back in session (turn {nxt})")
