"""The Lanes tab of a fleet's run: the leaderboard. The winner first, then lanes the fleet verified, then by worst
error over tolerance (visible comparisons; held-out ones as pass or fail only), each with its state, approach,
shifts and cost. Each lane is a run of its own: `nightshift attach|nudge|pause|stop <lane run>` reach it."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from nightshift.tui.shown import cells as shown_cells

from nightshift.tui import fmt

COLUMNS = (("rank", "#"), ("lane", "Lane"), ("status", "State"), ("metric", "Err/tol"), ("heldout", "Held-out"),
           ("shift", "Shifts"), ("cost", "Cost"), ("approach", "Approach"), ("run", "Lane run"))


def ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def key(row: dict[str, Any]) -> tuple:
        metric = row.get("metric")
        return (not row.get("winner"), not row.get("verified"), row.get("cheats") != [],
                metric is None, metric if metric is not None else 0.0, row["lane"])
    return sorted(rows, key=key)


def lane_cells(rank: int, row: dict[str, Any]) -> list:
    status = str(row.get("status") or "-")
    style = "green" if row.get("winner") else "red" if row.get("cheats") or status == "cheated" else ""
    label = "WINNER" if row.get("winner") else ("CHEATED" if row.get("cheats") else status)
    held = row.get("heldout")
    return [str(rank), str(row["lane"]), Text(label, style=style), fmt.metric(row.get("metric")),
            Text(held, style="green" if held == "pass" else "red") if held else "-", str(row.get("shift") or 0),
            fmt.cost(row.get("cost_usd")), fmt.ellipsize(row.get("approach") or "(its own choice)", 40),
            row.get("run_id") or "-"]


class LanesTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    def show_lanes(self, rows: list[dict[str, Any]]) -> None:
        keep = self.cursor_row
        self.clear()
        for rank, row in enumerate(ranked(rows), 1):
            self.add_row(*shown_cells(lane_cells(rank, row)), key=str(row["lane"]))
        if self.row_count:
            self.move_cursor(row=min(keep, self.row_count - 1))
