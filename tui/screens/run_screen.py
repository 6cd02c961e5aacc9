"""One run in tabs: Agent, Plan, Lab notes, Oracle, Shifts, Events, and for a fleet Lanes (its leaderboard); the
action keys act on this run.

The screen reads its run's follower (kept by the app, advanced by the live worker) and redraws the visible
tab when the run changes; nothing here reads the whole event log.
"""
from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from nightshift.supervisor.run.shown import plain
from nightshift.supervisor.fleet.state import is_fleet_dir, lane_rows
from nightshift.tui import fmt
from nightshift.tui.screens import HELP_AND_QUIT
from nightshift.tui.fleet_rows import fleet_line
from nightshift.tui.runs import (held, orphaned, read_supervisor, run_limits, sandbox_tag, status_label,
                                  where_it_runs)
from nightshift.tui.slurm_view import slurm_lines
from nightshift.tui.widgets.agent_tail import AgentTail
from nightshift.tui.widgets.doc_view import DocView
from nightshift.tui.widgets.events_view import EventsView
from nightshift.tui.widgets.lanes_table import LanesTable
from nightshift.tui.widgets.oracle_view import OracleView
from nightshift.tui.widgets.shifts_table import ShiftsTable

TABS = ("agent", "plan", "notes", "oracle", "shifts", "events")
TAB_LABELS = ("Agent", "Plan", "Lab notes", "Oracle", "Shifts", "Events")


class RunScreen(Screen):
    BINDINGS = HELP_AND_QUIT + [
        ("escape", "back", "Back"), ("p", "app.pause", "Pause"), ("r", "app.resume", "Resume"),
        ("x", "app.stop_run", "Stop"), ("n", "app.nudge", "Nudge"), ("a", "app.attach", "Attach"),
        ("v", "app.verdict", "Verdict"), Binding("g", "app.refresh", "Reload", show=False),
        Binding("y", "app.approve", "Approve", show=False), Binding("N", "app.deny", "Deny", show=False),
        Binding("slash", "filter", "Filter", show=False), Binding("o", "app.report", "Report", show=False),
        Binding("l", "tab('lanes')", "Lanes", show=False),
    ] + [Binding(str(i + 1), f"tab('{tab}')", label, show=False) for i, (tab, label) in enumerate(zip(TABS, TAB_LABELS))]

    DEFAULT_CSS = """
    RunScreen #run-title { height: auto; max-height: 2; padding: 0 1; background: $primary-background; }
    RunScreen TabbedContent { height: 1fr; }
    RunScreen TabPane { padding: 0; }
    """

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id

    @property
    def follower(self):
        return self.app.book.followers[self.run_id]

    def compose(self) -> ComposeResult:
        yield Static("", id="run-title")
        # Only the Agent tab is built now; the others on first view (a quicker first paint over SSH).
        with TabbedContent(initial="agent", id="run-tabs"):
            for tab, label in zip(TABS, TAB_LABELS):
                with TabPane(label, id=tab):
                    if tab == "agent":
                        yield AgentTail(self.follower.run, id="agent-tail")
        yield Footer()

    def _tab_widget(self, tab: str):
        run = self.follower.run
        workspace = Path(self.follower.state.get("workspace") or run.workspace)
        return {
            "plan": lambda: DocView(workspace / "CLAUDE.md", with_progress=True, id="plan-doc"),
            "notes": lambda: DocView(workspace / "CHANGELOG.md", with_progress=False, id="notes-doc"),
            "oracle": lambda: OracleView(run, id="oracle-view"),
            "shifts": lambda: ShiftsTable(id="shifts-table"),
            "events": lambda: EventsView(id="events-view"),
        }[tab]()

    async def ensure_tab(self, tab: str) -> None:
        """Build a tab's content the first time it is shown."""
        if tab in self._built or tab not in TABS:  # "lanes" is built at mount, for a fleet only
            return
        self._built.add(tab)
        await self.query_one(f"#{tab}", TabPane).mount(self._tab_widget(tab))

    async def on_mount(self) -> None:
        self._built = {"agent"}
        if is_fleet_dir(self.follower.run.root):  # a fleet's run: its lanes as a leaderboard, in a tab of their own
            await self.query_one("#run-tabs", TabbedContent).add_pane(
                TabPane("Lanes", LanesTable(id="lanes-table"), id="lanes"))
            self._built.add("lanes")
        self._ready = True
        self.runs_changed({self.run_id})

    def run_id_in_focus(self) -> str:
        return self.run_id

    def shift_in_focus(self) -> int | None:
        if self.query_one("#run-tabs", TabbedContent).active == "shifts":
            return self.query_one(ShiftsTable).shift_in_focus()
        return None

    def title_text(self) -> Text:
        follower, now = self.follower, self.app.clock()
        state = follower.state
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{self.run_id} ", style="bold")
        if follower.problem:
            text.append(plain(f"{follower.problem}: {follower.detail}", one_line=True), style="red")
            return text
        sup = read_supervisor(follower.run, now)
        verdict = state.get("last_verdict")
        text.append(f"{status_label(state, sup)}", style="bold")
        text.append(f" · shift {state.get('shift') or '-'} · ")
        if verdict:
            text.append("PASS" if verdict.get("passed") else "FAIL", style="green" if verdict.get("passed") else "red")
            text.append(plain(sandbox_tag(verdict), one_line=True), style="bold yellow")  # a weaker boundary
        else:
            text.append("no verdict")
        fleet = self.app.book.fleet_spent(self.run_id, now)  # a fleet: what its lanes spent together
        text.append(f" · best {fmt.metric(state.get('best_metric'))} · "
                    f"{fmt.cost(state.get('cost_usd') if fleet is None else fleet[0])}")
        if state.get("waiting_for"):
            text.append(f" · WAITS for {state['waiting_for']}: y approves, N denies", style="bold yellow")
        if state.get("refusals"):
            text.append(f" · {state['refusals']} refused", style="yellow")
        if orphaned(state, sup):
            text.append(f" · no supervisor: `nightshift resume {self.run_id}`", style="red")
        elif held(state) and not sup.alive:
            text.append(f" · paused, no supervisor needed: `nightshift resume {self.run_id}` when ready",
                        style="yellow")
        text.append(f"\n{where_it_runs(state, now)} · last event {fmt.ts_age(state.get('last_event_ts'), now)} ago · ",
                    style="dim")
        text.append(fmt.ellipsize(state.get("goal") or "", 200), style="dim")
        # A fleet's limits hold for its lanes together: that is the line to read them against, not its own.
        lines = slurm_lines(state, follower.run.root, now, (0.0, 0.0) if fleet else self._caps())
        lines += [fleet_line(*fleet, self._caps())] if fleet else []
        for line in lines:
            text.append(f"\n{line}", style="red" if line.startswith("last job") else "")
        self._title_rows = 2 + len(lines)  # one more row per Slurm line
        return text

    def _show_title(self) -> None:
        title = self.query_one("#run-title", Static)
        title.update(self.title_text())
        title.styles.max_height = getattr(self, "_title_rows", 2)

    def _caps(self) -> tuple[float, float]:
        """[limits] max_core_hours and max_gpu_hours of the run's frozen config, read once."""
        if not hasattr(self, "_limits"):
            self._limits = run_limits(self.follower.run)
        return self._limits

    def runs_changed(self, run_ids: set[str]) -> None:
        if not getattr(self, "_ready", False):
            return  # not composed yet; on_mount draws it
        if run_ids and self.run_id not in run_ids and self.run_id in self.app.book.followers:
            self._show_title()  # ages only
            return
        if self.run_id not in self.app.book.followers:
            return
        self._show_title()
        self.refresh_tab(self.query_one("#run-tabs", TabbedContent).active)

    def refresh_tab(self, tab: str) -> None:
        if tab not in self._built:
            return
        follower = self.follower
        state = follower.state
        if tab == "agent":
            self.query_one(AgentTail).show_state(state)
        elif tab == "plan":
            self.query_one("#plan-doc", DocView).check()
        elif tab == "notes":
            self.query_one("#notes-doc", DocView).check()
        elif tab == "oracle":
            self.query_one(OracleView).show_state(state)
        elif tab == "shifts":
            self.query_one(ShiftsTable).show_state(state, self.app.clock())
        elif tab == "events":
            self.query_one(EventsView).show_events(follower.recent_events())
        elif tab == "lanes":
            self.query_one(LanesTable).show_lanes(lane_rows(follower.run.root) or [])

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        await self.ensure_tab(event.pane.id or "")
        self.refresh_tab(event.pane.id or "")

    async def action_tab(self, tab: str) -> None:
        if tab not in TABS and tab not in self._built:
            return  # Lanes, on a run that is not a fleet
        self.query_one("#run-tabs", TabbedContent).active = tab
        await self.ensure_tab(tab)
        # Keys then go to the tab's content (up/down/Enter in a table) rather than to the tab bar.
        content = {"shifts": ShiftsTable, "oracle": "#oracle-table", "agent": AgentTail, "lanes": LanesTable}.get(tab)
        if content is not None:
            self.query_one(content).focus()

    async def action_filter(self) -> None:
        await self.action_tab("events")
        self.query_one("#event-filter").focus()

    def action_back(self) -> None:
        from nightshift.tui.screens.dashboard import DashboardScreen

        if any(isinstance(screen, DashboardScreen) for screen in self.app.screen_stack):
            self.dismiss()
        else:  # the TUI was opened on this run
            self.app.switch_screen(DashboardScreen())
