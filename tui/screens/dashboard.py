"""The dashboard: one row per run of the user (the registry), the state of each at a glance.

A fleet's lanes are rows under the fleet's row ("  └ lane-1"), each acted on by the same keys as any run: a lane
is a run of its own. Rows for runs that cannot be read whole (missing, half-written) say so in the State column
and, for the highlighted row, in the line under the table. Enter opens the run; the action keys act on the
highlighted run.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from nightshift.supervisor.run.shown import plain
from nightshift.tui.fmt import ellipsize
from nightshift.tui.screens import HELP_AND_QUIT
from nightshift.tui.shown import cells as shown_cells
from nightshift.tui.runs import RunRow

COLUMNS = (("run", "Run"), ("state", "State"), ("shift", "Sh"), ("verdict", "Verdict"), ("best", "Best"),
           ("trend", "Trend"), ("last", "Last"), ("sup", "Supervisor"), ("cost", "Cost"), ("where", "Where"),
           ("workspace", "Workspace"))
STATE_STYLES = {"done": "green", "failed": "red", "stopped": "yellow", "paused": "yellow", "pushed back": "magenta",
                "missing": "red", "half-written": "red", "unreadable": "red",
                # a lane as its fleet ended it (tui/fleet_rows.py)
                "WINNER": "bold green", "verified": "green", "cheated": "bold red", "retired": "yellow",
                "spent": "yellow"}


def state_cell(row: RunRow) -> Text:
    style = STATE_STYLES.get(row.state, "red" if "no supervisor" in row.state else "")
    label = row.state + (" !" if row.warnings else "")
    return Text(label, style=style)


def cells(row: RunRow) -> list:
    verdict = Text(row.verdict, style="green" if row.verdict == "PASS" else "red" if row.verdict.startswith("FAIL") else
                   "yellow" if row.verdict.startswith("PASS") else "")  # a pass in a weaker boundary: its tier said
    sup = Text(row.supervisor, style="red" if row.supervisor.endswith(" dead") else "")
    # A lane is indented under its fleet's row (ellipsize would fold the leading spaces away).
    name = ellipsize(row.name, 16) if row.lane is None else "  " + ellipsize(row.name, 14)
    return [name, state_cell(row), str(row.shift or "-"), verdict, row.best, row.spark,
            row.last_event, sup, row.cost, row.where, row.workspace]


class DashboardScreen(Screen):
    """Every run; Enter opens one."""

    BINDINGS = HELP_AND_QUIT + [
        ("enter", "open", "Open"), ("p", "app.pause", "Pause"), ("r", "app.resume", "Resume"),
        ("x", "app.stop_run", "Stop"), ("n", "app.nudge", "Nudge"), ("a", "app.attach", "Attach"),
        ("v", "app.verdict", "Verdict"), ("s", "app.start_run", "Start run"),
        ("b", "app.submit", "Submit (Slurm)"), Binding("g", "app.refresh", "Reload", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static("nightshift · your runs", classes="title-bar", id="dash-title")
        table = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static("reading the registry ...", classes="detail-line", id="dash-detail")
        yield Footer()

    def on_mount(self) -> None:
        self._ready = True
        self.runs_changed(set())

    def run_id_in_focus(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if table.row_count == 0:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - no row under the cursor
            return None

    def runs_changed(self, run_ids: set[str]) -> None:
        """Redraw the rows (cheap: a few dozen cells), keeping the cursor on the same run."""
        app = self.app
        if not getattr(app, "loaded", False) or not getattr(self, "_ready", False):
            return
        table = self.query_one("#runs", DataTable)
        keep = self.run_id_in_focus()
        rows = app.book.rows()
        self._rows = {row.run_id: row for row in rows}
        known = [key.value for key in table.rows]
        drawn = getattr(self, "_drawn", {})
        # In order, not as a set: a lane's row moves under its fleet once the fleet's lanes are known.
        if known != [row.run_id for row in rows]:
            table.clear()
            drawn = {}
            for row in rows:
                values = cells(row)
                table.add_row(*shown_cells(values), key=row.run_id)
                drawn[row.run_id] = [str(v) for v in values]
        else:
            for row in rows:  # only the cells that changed: an idle dashboard redraws nothing
                values = cells(row)
                old = drawn.get(row.run_id, [])
                for i, ((key, _), value) in enumerate(zip(COLUMNS, values)):
                    if i >= len(old) or old[i] != str(value):
                        table.update_cell(row.run_id, key, shown_cells([value])[0], update_width=True)
                drawn[row.run_id] = [str(v) for v in values]
        self._drawn = drawn
        if keep in self._rows:
            table.move_cursor(row=table.get_row_index(keep))
        lanes = sum(1 for row in rows if row.lane is not None)
        runs = len(rows) - lanes  # a fleet is one run, however many lanes it has
        title = f"nightshift · {runs} run{'s' if runs != 1 else ''}" + \
            (f" ({lanes} lane{'s' if lanes != 1 else ''} under their fleets)" if lanes else "")
        self.query_one("#dash-title", Static).update(title)
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#dash-detail", Static)
        rows = getattr(self, "_rows", {})
        if not rows:
            detail.update("No runs yet. Press s to start one in a workspace with nightshift.toml "
                          "(`nightshift init` makes one), or run `nightshift demo`.")
            return
        row = rows.get(self.run_id_in_focus() or "")
        if row is None:
            return
        text = Text()
        text.append(f"{row.run_id}  ", style="bold")
        text.append(plain(row.detail or "(no goal)"), style="red" if row.problem else "")
        for warning in row.warnings[-2:]:
            text.append(f"\n! {plain(warning, one_line=True)}", style="yellow")
        detail.update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.open_run(event.row_key.value)

    def action_open(self) -> None:
        run_id = self.run_id_in_focus()
        if run_id:
            self.app.open_run(run_id)
