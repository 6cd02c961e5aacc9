"""What a user can do to a run from the TUI, by key and from the command palette: pause, resume, stop (after a
confirmation), nudge (a message for the agent), approve or deny what the agent waits for, attach to the agent's
pane, open a shift's verdict, start a run, write the run's report. Commands go to the run's inbox in a thread
worker; the supervisor's answer comes back as a notice.
"""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from textual import work
from textual.app import SuspendNotSupported, SystemCommand

from nightshift.tui.seams import ActionError

if TYPE_CHECKING:
    from nightshift.tui.follow import RunFollower


class RunActions:
    """Mixed into the app: each ``action_*`` acts on the run the current screen is about."""

    def focused_run(self, screen=None) -> "RunFollower | None":
        run_id = getattr(screen or self.screen, "run_id_in_focus", lambda: None)()
        return self.book.followers.get(run_id) if run_id else None

    def _need_run(self, follower: "RunFollower | None" = None) -> "RunFollower | None":
        follower = follower or self.focused_run()
        if follower is None:
            self.notify("no run selected: pick one in the list first", severity="warning")
        elif follower.problem:
            self.notify(f"run {follower.run.run_id} is {follower.problem}: {follower.detail}", severity="error")
            return None
        return follower

    def action_pause(self, follower: "RunFollower | None" = None) -> None:
        if follower := self._need_run(follower):
            self.send_command(follower, "pause")

    def action_resume(self, follower: "RunFollower | None" = None) -> None:
        if follower := self._need_run(follower):
            self.send_command(follower, "resume")

    def action_stop_run(self, follower: "RunFollower | None" = None) -> None:
        from nightshift.tui.screens.confirm import ConfirmScreen

        if follower := self._need_run(follower):
            question = f"Stop run {follower.run.run_id}? The agent is ended and the run finishes as stopped."
            self.push_screen(ConfirmScreen(question, yes="Stop the run"),
                             lambda yes: self.send_command(follower, "stop", via=self.seams.stop) if yes else None)

    def action_approve(self, follower: "RunFollower | None" = None) -> None:
        """Answer yes to what the agent waits for (a permission prompt on its screen)."""
        if follower := self._need_run(follower):
            self.send_command(follower, "approve")

    def action_deny(self, follower: "RunFollower | None" = None) -> None:
        if follower := self._need_run(follower):
            self.send_command(follower, "deny")

    def action_nudge(self, follower: "RunFollower | None" = None) -> None:
        from nightshift.tui.screens.nudge import NudgeScreen

        if follower := self._need_run(follower):
            self.push_screen(NudgeScreen(follower.run.run_id),
                             lambda text: self.send_command(follower, "nudge", message=text) if text else None)

    @work(thread=True, exit_on_error=False, group="commands")
    def send_command(self, follower: "RunFollower", verb: str, via=None, **args) -> None:
        """``via``: the seam that carries this verb when it is more than an inbox command (stop: `nightshift
        stop`'s own path, which cancels a submitted chain's queued jobs)."""
        run = follower.run
        self.call_from_thread(self.notify, f"{verb} sent to {run.run_id}", timeout=3)
        try:
            ack = via(run) if via is not None else self.seams.send(run, verb, **args)
        except (ActionError, ValueError) as exc:
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=10)
            return
        except Exception as exc:  # noqa: BLE001 - a bug in an action is a notice, never the end of the TUI
            self.call_from_thread(self.notify, f"{verb} failed: {type(exc).__name__}: {exc}", severity="error",
                                  timeout=15)
            return
        if ack.accepted:
            said = f": {ack.reason}" if ack.reason and via is not None else ""
            self.call_from_thread(self.notify, f"{run.run_id}: {verb} accepted{said}", timeout=5)
        elif ack.accepted is False:
            self.call_from_thread(self.notify, f"{run.run_id}: {verb} refused by the supervisor: {ack.reason}",
                                  severity="error", timeout=10)
        else:
            self.call_from_thread(self.notify, f"{run.run_id}: no answer to {verb} yet; is the supervisor running? "
                                  f"(`nightshift resume {run.run_id}` restarts it; the command waits in the inbox)",
                                  severity="warning", timeout=10)

    def action_attach(self, follower: "RunFollower | None" = None) -> None:
        follower = self._need_run(follower)
        if follower is None:
            return
        argv = self.seams.attach_argv(follower.run)
        if not argv:
            self.notify(f"run {follower.run.run_id} has no agent pane to attach to right now", severity="warning")
            return
        # Inside the user's own tmux, a nested attach is refused unless TMUX is unset for it.
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        try:
            with self.suspend():
                subprocess.run(argv, check=False, env=env)
        except SuspendNotSupported:
            self.notify(f"cannot hand over this terminal; run: {shlex.join(argv)}", severity="warning", timeout=10)
        except OSError as exc:
            self.notify(f"could not run {argv[0]}: {exc.strerror}", severity="error")

    def action_verdict(self, shift: int | None = None, follower: "RunFollower | None" = None) -> None:
        from nightshift.tui.screens.verdict import VerdictScreen

        if follower := self._need_run(follower):
            shift = shift or getattr(self.screen, "shift_in_focus", lambda: None)() or follower.state.get("shift")
            if not shift:
                self.notify("no shift has run yet", severity="warning")
                return
            self.push_screen(VerdictScreen(follower.run, int(shift)))

    def action_report(self, follower: "RunFollower | None" = None) -> None:
        if follower := self._need_run(follower):
            self.write_report(follower)

    @work(thread=True, exit_on_error=False, group="commands")
    def write_report(self, follower: "RunFollower") -> None:
        run = follower.run
        self.call_from_thread(self.notify, f"writing the report of {run.run_id} ...", timeout=3)
        try:
            path = self.seams.report(run)
        except Exception as exc:  # noqa: BLE001 - a failed report is a notice, never the end of the TUI
            self.call_from_thread(self.notify, f"report failed: {exc}", severity="error", timeout=10)
            return
        # Not opened from here: over SSH a "browser" may be a text one taking over this terminal.
        self.call_from_thread(self.notify, f"report written: {path} (open it in a browser)", timeout=15)

    def action_start_run(self) -> None:
        from nightshift.tui.screens.start_run import StartRunScreen

        def picked(choice) -> None:
            if isinstance(choice, tuple):  # (path, the preflight's result): the run records it
                self.start_run_in(Path(choice[0]), choice[1])
            elif choice:
                self.start_run_in(Path(choice))
        self.push_screen(StartRunScreen(check=self.seams.preflight), picked)

    def action_submit(self) -> None:
        from nightshift.tui.screens.submit import SubmitScreen

        def submitted(result) -> None:
            if result:
                self.notify(f"run {result[0]} submitted as Slurm job {result[1]}; it continues itself across "
                            "walltime limits", timeout=8)
                self.poll_now()

        self.push_screen(SubmitScreen(), submitted)

    @work(thread=True, exit_on_error=False, group="commands")
    def start_run_in(self, workspace: Path, checked=None) -> None:
        self.call_from_thread(self.notify, f"starting a run in {workspace} ...", timeout=3)
        try:
            run, where = self.seams.start_run(workspace) if checked is None else \
                self.seams.start_run(workspace, checked)
        except ActionError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=10)
            return
        except Exception as exc:  # noqa: BLE001 - a bug in an action is a notice, never the end of the TUI
            self.call_from_thread(self.notify, f"starting a run failed: {type(exc).__name__}: {exc}",
                                  severity="error", timeout=15)
            return
        self.call_from_thread(self.notify, f"run {run.run_id} started: supervisor in {where}", timeout=8)
        self.call_from_thread(self.poll_now)

    def action_help(self) -> None:
        from nightshift.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_refresh(self) -> None:
        self.poll_now()

    def run_commands(self, screen) -> Iterable[SystemCommand]:
        """The palette's entries (ctrl+p): the same actions as the keys, named."""
        yield SystemCommand("Start a run", "Create a run in a workspace that has nightshift.toml", self.action_start_run)
        yield SystemCommand("Submit to Slurm", "Show the batch script of a workspace's run, then submit it",
                            self.action_submit)
        yield SystemCommand("Keys", "The help screen with every key", self.action_help)
        follower = self.focused_run(screen)
        if follower is None or follower.problem:
            return
        rid = follower.run.run_id
        for title, help_text, action in (
                (f"Pause {rid}", "Hold the run after the agent's current turn", self.action_pause),
                (f"Resume {rid}", "Continue a paused run", self.action_resume),
                (f"Stop {rid}", "End the run (asks first)", self.action_stop_run),
                (f"Nudge {rid}", "Type a message for the agent", self.action_nudge),
                (f"Attach to {rid}", "Hand this terminal to the agent's pane", self.action_attach),
                (f"Approve for {rid}", "Answer yes to what the agent waits for", self.action_approve),
                (f"Deny for {rid}", "Answer no to what the agent waits for", self.action_deny),
                (f"Report of {rid}", "Write the morning report (one HTML file) and say where", self.action_report)):
            yield SystemCommand(title, help_text, lambda action=action: action(follower))
        for row in reversed(follower.state.get("shifts") or []):
            n = row.get("n")
            yield SystemCommand(f"Verdict of shift {n} ({rid})", "The checks and the push-back of that shift",
                                lambda n=n: self.action_verdict(n, follower))
