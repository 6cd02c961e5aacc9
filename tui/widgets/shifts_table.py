"""The Shifts tab: one row per shift (start, length, end reason, verdict, commit, cost); Enter opens its
verdict and push-back."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from nightshift.tui.shown import cells as shown_cells

from nightshift.tui import fmt

COLUMNS = (("n", "Shift"), ("start", "Start (UTC)"), ("length", "Length"), ("turns", "Turns"), ("end", "End"),
           ("verdict", "Verdict"), ("commit", "Commit"), ("cost", "Cost"))


def shift_cells(row: dict[str, Any], now: float, state: dict[str, Any] | None = None) -> list:
    if state and state.get("phase") == "finished" and row.get("started") and not row.get("ended"):
        # a run folded before its end closed the open shift (supervisor/run/state.py): it ended with the run
        row = {**row, "ended": state.get("finished_ts") or state.get("last_event_ts"),
               "end_reason": f"run {state.get('outcome') or 'ended'}"}
    verdict = row.get("verdict")
    v = Text("PASS", style="green") if verdict == "pass" else Text("FAIL", style="red") if verdict == "fail" else "-"
    commits = row.get("commits") or []
    return [str(row.get("n")), fmt.clock_time(row.get("started")), fmt.duration(row.get("started"), row.get("ended"), now),
            str(row.get("turns") or 0), row.get("end_reason") or ("running" if not row.get("ended") else "-"), v,
            (str(commits[-1])[:8] + (f" +{len(commits) - 1}" if len(commits) > 1 else "")) if commits else "-",
            fmt.cost(row.get("cost_usd"))]


class ShiftsTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    def show_state(self, state: dict[str, Any], now: float) -> None:
        keep = self.cursor_row
        self.clear()
        for row in reversed(state.get("shifts") or []):  # newest first
            self.add_row(*shown_cells(shift_cells(row, now, state)), key=str(row.get("n")))
        if self.row_count:
            self.move_cursor(row=min(keep, self.row_count - 1))

    def shift_in_focus(self) -> int | None:
        if not self.row_count:
            return None
        try:
            return int(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
        except Exception:  # noqa: BLE001
            return None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.action_verdict(int(event.row_key.value))
