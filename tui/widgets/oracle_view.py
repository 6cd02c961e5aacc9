"""The Oracle tab: the latest verdict's comparisons as a table, a row each (a table by its worst column; `c` shows
every column; failing rows say FAIL, not only in red) and the history of the oracle figure per comparison, plotted
with the tolerance line."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from nightshift.supervisor.run.shown import plain
from nightshift.tui.shown import cells as shown_cells

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.heldout import budget_line, read_private, read_private_many
from nightshift.tui import fmt
from nightshift.tui.follow import latest_turn_file
from nightshift.tui.oracle_report import OracleRow, heldout_keys, heldout_series, history, load_report, num
from nightshift.tui.widgets.oracle_plot import OracleHistoryPlot

COLUMNS = ("Result", "Comparison", "Column", "max rel", "tol", "at x", "p95", "failing", "max abs")


def report_path(run: RunPaths, state: dict[str, Any]):
    """The oracle report of the last verdict: shifts/<n>/t<turn>.oracle/oracle.json."""
    metrics = state.get("metrics") or []
    if not metrics:
        return None
    last = metrics[-1]
    shift, turn = last.get("shift"), last.get("turn")
    if shift and turn:
        return run.turn_file(int(shift), int(turn), "oracle") / "oracle.json"
    folder = latest_turn_file(run, shift, "oracle")
    return folder / "oracle.json" if folder else None


def row_cells(row: OracleRow) -> list:
    if row.passed is None:
        result = Text("?", style="yellow")
    else:
        result = Text("pass", style="green") if row.passed else Text("FAIL", style="bold red")
    style = "red" if row.passed is False else ""
    failing = f"{num(row.failing)}/{num(row.points)}" if row.points is not None else num(row.failing)
    return [result, Text(plain(fmt.ellipsize(row.comparison, 22), one_line=True), style=style), row.column,
            Text(num(row.max_rel), style=style), num(row.tol), num(row.where), num(row.p95), failing,
            row.note or num(row.max_abs)]


class OracleView(Vertical):
    DEFAULT_CSS = """
    OracleView { height: 1fr; }
    OracleView #oracle-head { height: auto; padding: 0 1; }
    OracleView DataTable { height: auto; max-height: 9; }
    """

    BINDINGS = [Binding("c", "toggle_columns", "columns")]

    def __init__(self, run: RunPaths, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run
        self._shown: tuple | None = None
        self.columns = False  # a row per comparison; `c`: a row per column of each table
        self._loaded: tuple = (None, None, None, None)

    def action_toggle_columns(self) -> None:
        self.columns = not self.columns
        self.load(*self._loaded)

    def compose(self) -> ComposeResult:
        yield Static("no verdict yet", id="oracle-head")
        table = DataTable(id="oracle-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield OracleHistoryPlot(id="oracle-plot")

    def show_state(self, state: dict[str, Any]) -> None:
        metrics = state.get("metrics") or []
        key = (len(metrics), state.get("seq") if not metrics else None)
        if key == self._shown:
            return
        self._shown = key
        visible = history(metrics, state.get("baseline"))
        self.query_one(OracleHistoryPlot).set_series(visible)
        self.load_heldout_lines(visible, metrics, state.get("baseline"))
        self.load(report_path(self.run, state), metrics[-1] if metrics else None, state.get("best_metric"),
                  budget_line(state.get("heldout")))

    @work(thread=True, exit_on_error=False, exclusive=True, group="oracle-heldout")
    def load_heldout_lines(self, visible: dict, metrics: list[dict[str, Any]], baseline: dict | None) -> None:
        # The held-out lines, as the report and `nightshift plot` draw them: from the user's private figures
        # (the fold carries none), read in a worker since a long run has thousands.
        held = heldout_series(metrics, baseline, read_private_many(self.run.root, heldout_keys(metrics)))
        if held:
            self.app.call_from_thread(self.query_one(OracleHistoryPlot).set_series, {**visible, **held})

    @work(thread=True, exit_on_error=False, exclusive=True, group="oracle")
    def load(self, path, last: dict[str, Any] | None, best: Any, exam: str | None = None) -> None:
        # the user's view: held-out comparisons with their full figures, from the private store
        self._loaded = (path, last, best, exam)
        private = read_private(self.run.root, last.get("shift"), last.get("turn")) if last else None
        rows, note = load_report(path, private, self.columns)
        self.app.call_from_thread(self._paint, rows, note, last, best, exam)

    def _paint(self, rows: list[OracleRow], note: str, last: dict[str, Any] | None, best: Any,
               exam: str | None = None) -> None:
        head = Text()
        if last is not None:
            fails = sum(1 for r in rows if r.passed is False)
            head.append(f"shift {last.get('shift')} turn {last.get('turn')}: figure {fmt.metric(last.get('metric'))}"
                        f" (best {fmt.metric(best)}; under 1 passes)  ")
            if rows:
                head.append(f"{fails} FAILING" if fails else "all passing", style="bold red" if fails else "green")
        if exam:
            head.append(f"\n{exam}", style="bold")
        if note:
            head.append(("\n" if last is not None else "") + plain(note), style="dim")
        self.query_one("#oracle-head", Static).update(head)
        table = self.query_one("#oracle-table", DataTable)
        table.clear()
        # Failing rows first: they are what the agent is pushed back on.
        for row in sorted(rows, key=lambda r: r.passed is not False):
            table.add_row(*shown_cells(row_cells(row)))
