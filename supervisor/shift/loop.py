"""The shift loop: a state machine driven by the event log, so a supervisor killed at any moment resumes.

Each step reads the folded state's ``phase`` and does the next thing, recording it as an event first:

  launching -> agent.started (or adopted)   agent -> agent.stopped    stopped -> verify.finished
  verified  -> commit.created/skipped       committed -> run.finished | run.paused | pushback.sent | shift.started

This class decides; the ledger (shift/ledger.py) records, and the session (shift/session.py) launches the agent,
waits for its stops and reaches it. A restarted supervisor adopts a live agent, so no shift is lost or doubled.
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from typing import Any


from nightshift.supervisor import gitops
from nightshift.supervisor.agents.base import StopInfo
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.run.notify import tell
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.watch import Waker
from nightshift.supervisor.shift import crash
from nightshift.supervisor.shift.commands import handle_command
from nightshift.supervisor.shift.commit_step import commit_shift
from nightshift.supervisor.shift.decide import decide
from nightshift.supervisor.shift.judge_wait import hold_reason, judge_down, wait_for_judge
from nightshift.supervisor.shift.ledger import RunLedger
from nightshift.supervisor.shift.ratchet import start_ratchet
from nightshift.supervisor.shift.session import AgentSession
from nightshift.supervisor.shift.turns import orientation_prompt, take_claim, write_private
from nightshift.supervisor.verify.oracle.seal import put_back
from nightshift.supervisor.verify import git_controls
from nightshift.supervisor.shift.verdict_clock import deadline_for, verify_in_time
from nightshift.supervisor.verify.pipeline import StopContext, timed_out, verify_stop

OUTCOME_PAUSES = ("blocked", "budget", "breaker", "dialog", "cannot_start", "heldout", "judge")
# Holds the detached supervisor lets go of (README: "a run held by its budget or breaker has no supervisor"): the
# agent is released and only a person's `resume` goes on, so a supervisor would only wait (for days, on a login node).
HELD_WITHOUT_SUPERVISOR = ("budget", "breaker")


class LeftOnPause(Exception):
    """The foreground supervisor leaves a run held for a person (see Supervisor.leave_on_outcome)."""


class Supervisor:
    def __init__(self, run: RunPaths, config: Config, say=print, leave_on_outcome: bool = False,
                 let_go_when_held: bool = False):
        self.run_paths, self.config, self.say = run, config, say
        # `run --foreground`: a pause that needs a person (blocked, budget, breaker, a dialog, the judge) ends it with
        # the run held, so a script gets its exit code; `nightshift resume` continues the run later.
        self.leave_on_outcome = leave_on_outcome
        # A detached supervisor of its own run (not a Slurm chain's job, not a fleet's lane: those restart it) ends
        # at a hold of HELD_WITHOUT_SUPERVISOR; a stop sent then waits in the inbox for `resume` (exit 3).
        self.let_go_when_held = let_go_when_held
        self.ledger = RunLedger(run)
        self.session = AgentSession(self.ledger, config, say)
        self._repo = None
        self.stop_requested = False
        self.waker: Waker | None = None
        self._fewest_failing: int | None = None

    @property
    def repo(self):
        """Opened at first use, once run() has put .git/config back (GitPython reads it, includes too)."""
        if self._repo is None:
            self._repo = gitops.open_repo(self.run_paths.workspace)
        return self._repo

    @property
    def state(self) -> dict[str, Any]:
        return self.ledger.state

    def emit(self, type_: str, shift: int | None = None, **data: Any) -> dict[str, Any]:
        return self.ledger.emit(type_, shift, **data)

    # ----- the loop -------------------------------------------------------------------------------
    def run(self) -> int:
        for warning in self.ledger.open():
            self.say(f"warning: {warning}")
        crash.reserve_last_word(self.run_paths.last_word)
        if self.state["phase"] == "finished":  # a late restart (a resume racing the end): nothing to add to the log
            self.ledger.close()
            self.say(f"run {self.run_paths.run_id} has already finished ({self.state['outcome']})")
            return 0 if self.state["outcome"] == "done" else 1
        try:
            self.session.pending_request = (self.state["last_stop"] or {}).get("request_id")
            if self.run_paths.references.is_dir():  # a crash while the references were moved aside for the oracle
                put_back(self.run_paths.workspace, self.run_paths.references)
            for folder in (self.run_paths.refusals, self.run_paths.waits):  # the hooks write; a write wakes the loop
                folder.mkdir(mode=0o700, exist_ok=True)
            self.waker = Waker([self.run_paths.inbox, self.run_paths.stops, self.run_paths.shifts,
                                self.run_paths.refusals, self.run_paths.waits])
            self.emit("supervisor.started", self.state["shift"] or None, pid=os.getpid(),
                      phase=self.state["phase"])
            self.restore_git_controls(git_controls.at_start)
            if self.state["phase"] == "agent" and self.state["target"]:
                # A restart found the agent's turn under way: adopt it, never launch it a second time.
                target = self.state["target"]
                self.emit("agent.adopted", self.state["shift"], turn=self.state["turn"], target=target,
                          alive=self.session.backend.is_alive(target))
            # What waited in the inbox while no supervisor ran (a stop sent to a held run) is answered before any
            # step: a stop then a resume must end the run, never launch another turn first.
            self.tick()
            while self.state["phase"] != "finished":
                self.step()
            return 0 if self.state["outcome"] == "done" else 1
        except LeftOnPause:
            return 1
        except Exception as exc:
            # Any failure of the supervisor itself leaves a trace (event, last word, notification); re-raised.
            crash.record(exc, self.run_paths.run_id, self.run_paths.last_word, self.emit,
                         self.state.get("shift") or None, self.tell_human, self.say)
            raise
        finally:
            if self.waker:
                self.waker.stop()
            self.ledger.close()
            if self.state.get("phase") == "finished":
                self.end_backend()

    def end_backend(self) -> None:
        """The run is over: its tmux server goes too (each turn's screen is in its log, the story in the events),
        so weeks of runs leave no servers with dead panes behind. Last, since a detached supervisor lives in it."""
        end = getattr(self.session.backend, "kill_server", None)
        if end is not None:
            end()

    def step(self) -> None:
        phase = self.state["phase"]
        if self.stop_requested and phase not in ("stopped", "verified"):
            return self.finish("stopped", "stopped by the user")
        if self.state["paused"] and phase in ("committed", "decided"):
            return self.wait_while_paused()
        if phase == "new":
            return self.start_run()
        if phase == "launching":
            refusal = self.session.launch_refusal()
            if refusal:
                return self.pause("cannot_start", refusal) if not self.state["paused"] else self.wait_while_paused()
            return self.session.launch_turn()
        if phase == "agent":
            return self.record_stop(self.session.wait_for_stop(self.tick, self.sleep, lambda: self.stop_requested,
                                                               self.on_dialog, self.on_waiting))
        if phase == "stopped":
            return self.verify_or_wait()
        if phase == "verified":
            return self.commit()
        if phase == "committed":
            return decide(self)
        if phase == "decided":  # a shift ended and the next one was not yet started
            return self.start_shift()
        raise RuntimeError(f"unknown phase {phase!r} in the event log")

    def sleep(self) -> None:
        self.waker.wait(self.waker.interval)

    def sleep_until(self, until: float) -> None:
        """Wait (an API limit, a judge that is down) with the heartbeat kept and the inbox read; a stop ends it."""
        while time.time() < until and not self.stop_requested:
            self.tick()
            self.sleep()

    def tick(self) -> None:
        self.ledger.beat()
        self.session.answer_foreign_stops()
        for command in self.ledger.take_commands():
            handle_command(self, command)

    def start_run(self) -> None:
        if self.config.oracle is not None and self.config.oracle.compare:
            from nightshift.supervisor.verify.oracle import protect_references
            seeded = self.run_paths.workspace / ".nightshift" / "references"
            if seeded.is_dir() and not self.run_paths.references.exists():
                shutil.copytree(seeded, self.run_paths.references)  # hashes taken at `nightshift init`
            protect_references(self.config.oracle, self.run_paths.workspace, self.run_paths.references)
        self.ledger.remember_plan(self.ledger.plan_known())  # the plan as it stood when the run began
        refusal = self.session.launch_refusal()  # e.g. a required namespace: no code of the agent's runs without it
        if refusal:
            return self.pause("cannot_start", refusal) if not self.state["paused"] else self.wait_while_paused()
        # The ratchet's starting set (unless the preflight took it); nightshift.toml, [policy] protect, the
        # Definition of done and the starting set's test files, as the user left them when the run began
        problem = start_ratchet(self.run_paths, self.config, self.state, self.emit, self.say)
        if problem:
            return self.finish("failed", problem)
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
        self.say(f"shift {n}: started ({self.config.agent.kind} agent, {self.session.backend.kind})")

    def record_stop(self, stop: StopInfo) -> None:
        ctx = self.session.ctx()
        claim = take_claim(self.run_paths.root, ctx.shift, ctx.turn, ctx.token)
        data = stop.to_event()
        data.update(turn=ctx.turn, claim=claim, request_id=self.session.pending_request)
        self.emit("agent.stopped", ctx.shift, **data)
        claim_text = f", claims {claim['status']}: {claim['summary'][:80]}" if claim else ""
        self.say(f"shift {ctx.shift}: agent stopped ({stop.reason}{claim_text})")

    def on_dialog(self, problem: str) -> None:
        """Something on the agent's screen waits for a human (a first-run dialog): hold the run and say why."""
        if not self.state["paused"]:
            self.pause("dialog", problem)

    def on_waiting(self, what: str) -> None:
        """The agent waits for a human (a permission prompt): say so, and tell the human how to answer."""
        rid = self.run_paths.run_id
        then = ("it is answered no after " if self.config.policy.on_wait == "deny" else "it waits; checked again in ")
        self.say(f"shift {self.state['shift']}: the agent waits for {what}; `nightshift approve {rid}` or "
                 f"`nightshift deny {rid}` ({then}{self.config.policy.wait_timeout:.0f}s)")
        self.tell_human("waiting", f"the agent waits for {what}: nightshift approve {rid} / nightshift deny {rid}")

    # ----- verifying and committing ---------------------------------------------------------------
    def verify_or_wait(self) -> None:
        stop = self.state["last_stop"] or {}
        if stop.get("wait_until"):
            return self.wait_out_limit(stop)
        ctx, ledger = self.session.ctx(), self.ledger
        self.emit("verify.started", ctx.shift, turn=ctx.turn)
        passed_before, held = ledger.test_sets()
        stop_ctx = StopContext(
            run=self.run_paths, config=self.config, shift=ctx.shift, turn=ctx.turn, claim=stop.get("claim"),
            shift_base=self.state["shift_base"], accepted_base=self.state["accepted_base"],
            passed_before=passed_before, plan_known=ledger.plan_known(), judge_spent_usd=ledger.judge_spent(),
            state=self.state, baseline=ledger.baseline_tests(),
            passed_total=(self.state.get("ratchet") or {}).get("passed_total"),
            released=set((self.state.get("ratchet") or {}).get("released") or {}), held=held,
            goal=ledger.goal_tests())
        # In a worker with a deadline: the heartbeat, `status` and `stop` are answered while it runs.
        verdict = verify_in_time(lambda: verify_stop(stop_ctx), lambda step, s: timed_out(stop_ctx, step, s),
                                 self.tick, deadline_for(self.config))
        if judge_down(verdict):  # fail closed: ask again with backoff, then hold the run for a person (below)
            verdict = wait_for_judge(self, stop_ctx, verdict)
        before = ledger.passed_tests()
        ledger.remember_verdict(verdict)
        if ledger.passed_tests() - before:  # newly passed tests are protected at once, not from the next launch
            self.session.refresh_policy()
        self.emit("verify.finished", ctx.shift, **verdict.event_data(ctx.turn))
        self.say(f"shift {ctx.shift}: {verdict.summary}")
        if judge_down(verdict):
            self.emit("judge.unavailable", ctx.shift, turn=ctx.turn, error=verdict.judge.get("error"))
            if not self.stop_requested:
                self.pause("judge", hold_reason(self.run_paths.run_id, verdict.event_data(ctx.turn),
                                                self.config.judge.max_wait, self.run_paths.config))

    def wait_out_limit(self, stop: dict[str, Any]) -> None:
        """An overload or usage limit: wait (not a shift, not a breaker count), then retry the same prompt."""
        until = float(stop["wait_until"])
        ctx = self.session.ctx()
        self.emit("agent.waiting", ctx.shift, until=until, reason=stop.get("error", "API limit"))
        self.say(f"shift {ctx.shift}: API limit ({stop.get('error')}); waiting until "
                 f"{time.strftime('%H:%M:%S', time.localtime(until))}")
        self.sleep_until(until)
        if self.stop_requested:
            return self.finish("stopped", "stopped by the user")
        nxt = ctx.turn + 1
        write_private(self.run_paths.turn_file(ctx.shift, nxt, "prompt.md"), ctx.prompt_file.read_text())
        self.emit("pushback.sent", ctx.shift, turn=nxt, mode="retry", delivery="launch", summary="retry after limit")

    def commit(self) -> None:
        commit_shift(self)

    # ----- pausing, finishing ---------------------------------------------------------------------
    def pause(self, kind: str, reason: str, notify_kind: str | None = "paused") -> None:
        if not self.state["paused"]:
            self.emit("run.paused", self.state["shift"] or None, reason=reason, kind=kind)
        self.say(f"run paused: {reason}")
        if notify_kind:
            self.tell_human(kind if kind in ("breaker", "blocked") else notify_kind, reason)

    def pause_for_budget(self, what: str, limit: float, value: float) -> None:
        self.emit("budget.exceeded", self.state["shift"] or None, what=what, limit=limit, value=value)
        self.session.release()
        self.pause("budget", f"budget spent: {what} = {value} (limit {limit}); raise limits.{what} in "
                             f"{self.run_paths.config} and `nightshift resume {self.run_paths.run_id}`")

    def wait_while_paused(self) -> None:
        if self.leave_on_outcome and self.state.get("pause_kind") in OUTCOME_PAUSES:
            self.say(f"run {self.run_paths.run_id} is held ({self.state['pause_reason']}); `nightshift resume "
                     f"{self.run_paths.run_id}` continues it")
            raise LeftOnPause()
        if self.let_go_when_held and self.state.get("pause_kind") in HELD_WITHOUT_SUPERVISOR:
            self.tick()  # a command already in the inbox (a stop, a resume) is answered, not left behind
            if self.state["paused"] and not self.stop_requested:
                self.say(f"run {self.run_paths.run_id} is held ({self.state['pause_reason']}); its supervisor ends "
                         f"here: `nightshift resume {self.run_paths.run_id}` starts a new one")
                raise LeftOnPause()
            return
        while self.state["paused"] and not self.stop_requested:
            self.tick()
            self.sleep()

    def restore_git_controls(self, how=git_controls.restore) -> None:
        """The repository's control files as the user left them (at a start, and at the run's end)."""
        lines = how(self.run_paths.workspace, git_controls.store_of(self.run_paths.root))
        if lines:
            self.emit("git.restored", self.state["shift"] or None, lines=lines)

    def finish(self, outcome: str, reason: str) -> None:
        self.session.release()
        self.session.settle()
        self.restore_git_controls()
        from nightshift.supervisor.verify.verdict_tree import forget
        forget(self.run_paths.root, self.run_paths.workspace)  # the verdicts' build tree: gigabytes, maybe
        self.emit("run.finished", self.state["shift"] or None, outcome=outcome, reason=reason)
        self.say(f"run {outcome}: {reason}")
        self.tell_human("done" if outcome == "done" else "failed" if outcome == "failed" else "paused", reason)

    def tell_human(self, kind: str, message: str) -> None:
        error = tell(self.config.notify, kind, self.run_paths, message)
        if error:
            self.emit("notify.failed", self.state["shift"] or None, error=error)
