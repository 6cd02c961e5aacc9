"""A terminal plot of the oracle figure across verdicts, one marker per comparison, with the tolerance line.

The figure is worst error / tolerance (lower is better, 1 is the line to get under), drawn on a log scale
because errors fall by decades. Markers are letters as well as colours, so the plot reads without colour.
"""
from __future__ import annotations

import math

from rich.text import Text
from textual.widget import Widget

MARKERS = "abcdefghijklmnopqrstuvwxyz"
COLOURS = ("cyan", "magenta", "yellow", "green", "blue", "red")


def plot_text(series: dict[str, list[tuple[int, float | None]]], width: int, height: int) -> Text:
    """Render ``series`` (name -> [(verdict index, value)]) into a ``width`` x ``height`` text block."""
    points = [(i, v) for pts in series.values() for i, v in pts if v is not None and v > 0 and math.isfinite(v)]
    if not points or width < 20 or height < 5:
        return Text("no oracle history yet" if not points else "(too small to plot)", style="dim")
    logs = [math.log10(v) for _, v in points]
    ymin, ymax = min(min(logs), -0.5), max(max(logs), 0.5)
    n = max(i for i, _ in points) + 1
    legend_rows = 1 + (len(series) > 3)
    rows, label_w = max(3, height - 1 - legend_rows), 7
    cols = max(10, width - label_w - 1)

    def row_of(y: float) -> int:
        return round((ymax - y) / (ymax - ymin) * (rows - 1))

    def col_of(i: int) -> int:
        return 0 if n == 1 else round(i / (n - 1) * (cols - 1))

    grid = [[(" ", "")] * cols for _ in range(rows)]
    tol_row = row_of(0.0)
    grid[tol_row] = [("╌", "red dim")] * cols
    for k, (name, pts) in enumerate(series.items()):
        mark, colour = MARKERS[k % len(MARKERS)], COLOURS[k % len(COLOURS)]
        for i, v in pts:
            if v is None or v <= 0 or not math.isfinite(v):
                continue
            r = row_of(math.log10(v))
            grid[r][col_of(i)] = (mark, f"bold {colour}" if v > 1 else colour)
    labels = {0: f"{10 ** ymax:.0e}", rows - 1: f"{10 ** ymin:.0e}", tol_row: "tol 1"}
    out = Text(no_wrap=True, overflow="crop")
    for r in range(rows):
        out.append(f"{labels.get(r, ''):>{label_w}}", style="red" if r == tol_row else "dim")
        out.append("┤" if r in labels else "│", style="dim")
        for ch, style in grid[r]:
            out.append(ch, style=style)
        out.append("\n")
    axis = f"verdict 1{'':─^{max(0, cols - 2 - len(str(n)) - 8)}}{n}"
    out.append(" " * label_w + "└" + axis[:cols] + "\n", style="dim")
    out.append(" " * (label_w + 1))
    for k, name in enumerate(series):
        out.append(f"{MARKERS[k % len(MARKERS)]}", style=f"bold {COLOURS[k % len(COLOURS)]}")
        out.append(f"={name}  ")
    out.append("(value: worst error / tolerance)", style="dim")
    return out


class OracleHistoryPlot(Widget):
    """The plot; give it data with ``set_series`` and it redraws at its current size."""

    DEFAULT_CSS = "OracleHistoryPlot { height: 1fr; min-height: 6; }"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.series: dict[str, list[tuple[int, float | None]]] = {}

    def set_series(self, series: dict[str, list[tuple[int, float | None]]]) -> None:
        self.series = series
        self.refresh()

    def render(self) -> Text:
        return plot_text(self.series, self.size.width, self.size.height)
