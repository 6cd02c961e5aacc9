"""What waits for a person in an agent's session: the hooks' records (refusals, permission prompts) turned into
events, a prompt seen on the agent's screen, and the answer (typed into the pane, or `on_wait = "deny"` after
its timeout). A mixin of shift/session.py's AgentSession, whose state, ledger, backend and config it uses.
"""
from __future__ import annotations

import time
from typing import Callable

from nightshift.supervisor.shift.policy import take_refusals
from nightshift.supervisor.shift.waits import take_waits, waiting_on_screen

SCREEN_CHECK_SECONDS = 2.0  # a prompt waiting for a human is seen within seconds, at a tmux call each time


class HumanWaits:
    def record_boundary(self, on_waiting: Callable[[str], None]) -> None:
        """The hooks' records (refusals, permission prompts) as events: only the supervisor writes the log."""
        shift = self.state["shift"] or None
        for refusal in take_refusals(self.run_paths):
            self.ledger.emit("policy.denied", shift, tool=refusal.get("tool"), input=refusal.get("input"),
                             rule=refusal.get("rule"), message=refusal.get("message"),
                             decided_by=refusal.get("decided_by"))
        for wait in take_waits(self.run_paths.waits):
            if wait.get("token") == self.state["token"]:
                self.start_waiting(str(wait.get("what") or "a human"), "hook", on_waiting)

    def watch_screen(self, screen: str, on_waiting: Callable[[str], None]) -> None:
        what = waiting_on_screen(screen)
        if self._answered_on_screen:  # the prompt just answered stays drawn until the agent redraws its screen:
            if what:                   # not a new wait until the screen has been seen without one
                return
            self._answered_on_screen = False
        if what:
            self.start_waiting(what, "screen", on_waiting)
            self._screen_saw_wait = True
        elif self.state.get("waiting_for") and self._waiting_since is not None and self._screen_saw_wait \
                and time.monotonic() - self._waiting_since > SCREEN_CHECK_SECONDS:
            # Somebody answered in the pane itself (attached), or the prompt went away. A wait only the hook
            # reported (a prompt in words the screen check does not know) is never cleared this way.
            self._waiting_since, self._screen_saw_wait = None, False
            self.ledger.emit("agent.wait_answered", self.state["shift"], by="screen", answer="unknown")
        if self.state.get("waiting_for") and self._waiting_since is not None \
                and self.config.policy.on_wait == "deny" \
                and time.monotonic() - self._waiting_since > self.config.policy.wait_timeout:
            self.answer_wait(False, by="policy")

    def start_waiting(self, what: str, seen_by: str, on_waiting: Callable[[str], None]) -> None:
        if self.state.get("waiting_for"):
            return
        self._waiting_since = time.monotonic()
        self.ledger.emit("agent.waiting", self.state["shift"], kind="human", what=what, seen_by=seen_by,
                         on_wait=self.config.policy.on_wait, timeout=self.config.policy.wait_timeout)
        on_waiting(what)

    def answer_wait(self, approve: bool, by: str) -> bool:
        """Answer the prompt on the agent's screen: Enter takes its first choice (yes), Escape says no."""
        target = self.state.get("target")
        if not target or not self.backend.send_keys(target, "Enter" if approve else "Escape"):
            return False
        self._waiting_since, self._screen_saw_wait, self._answered_on_screen = None, False, True
        self.ledger.emit("agent.wait_answered", self.state["shift"], by=by, answer="approve" if approve else "deny")
        return True
