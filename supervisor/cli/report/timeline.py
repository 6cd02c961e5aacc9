"""The report's accuracy timeline as an inline PNG (base64): for each comparison, its worst error over its
tolerance at every verdict, on a log scale with the tolerance line at 1, the starting gap (if a preflight
measured one) at x = 0, held-out comparisons dashed with hollow markers; below it, the passing test count.
"""
from __future__ import annotations

import base64
import io
import math
from typing import Any

MARKERS_UP_TO = 300  # more verdicts than this: lines only (markers would hide the shape and cost time)


def timeline_png(timeline: list[dict[str, Any]], start_gap: dict[str, float], heldout: set[str],
                 title: str) -> tuple[str | None, str]:
    """(base64 PNG or None, a one-line reason when there is no image)."""
    fig, why = timeline_figure(timeline, start_gap, heldout, title)
    if fig is None:
        return None, why
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii"), ""


def timeline_figure(timeline: list[dict[str, Any]], start_gap: dict[str, float], heldout: set[str],
                    title: str) -> tuple[Any, str]:
    """(the matplotlib Figure or None, a one-line reason when there is none)."""
    names = sorted({n for point in timeline for n in point["values"]} | set(start_gap))
    tests = [p.get("tests") for p in timeline]
    has_tests = any(t is not None for t in tests)
    if not names and not has_tests:
        return None, "no verdict measured a comparison or a test yet"
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        return None, "the timeline needs matplotlib (pip install 'nightshift[plot]')"
    offset = 1 if start_gap else 0
    xs = list(range(offset, offset + len(timeline)))
    fig = Figure(figsize=(9.0, 5.0 if has_tests and names else 3.6), dpi=96)
    rows = (2 if names and has_tests else 1)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": [3, 1][:rows]})
    marker_ok = len(timeline) <= MARKERS_UP_TO
    if names:
        ax = axes[0][0]
        for n, name in enumerate(names):
            color, held = f"C{n % 10}", name in heldout
            ys = [_positive(p["values"].get(name)) for p in timeline]
            if name in start_gap:
                xs_n, ys = [0] + xs, [_positive(start_gap[name])] + ys
                ax.plot([0], [ys[0]], marker="*", markersize=11, color=color, linestyle="none")
            else:
                xs_n = xs
            ax.plot(xs_n, ys, color=color, linestyle="--" if held else "-", linewidth=1.4,
                    marker=("o" if marker_ok else None), markersize=4,
                    markerfacecolor="none" if held else color, label=name + (" (held out)" if held else ""))
        ax.axhline(1.0, color="black", linewidth=1, linestyle=":", label="tolerance")
        ax.set_yscale("log")
        ax.set_ylabel("worst error / tolerance")
        ax.legend(fontsize=7, loc="best")
        ax.grid(True, which="major", alpha=0.3)
    if has_tests:
        ax = axes[-1][0]
        ax.step(xs, [t if t is not None else math.nan for t in tests], where="post", color="C2")
        ax.set_ylabel("tests passing")
        from matplotlib.ticker import MaxNLocator
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of tests: 1.5 tests is no tick
        ax.grid(True, alpha=0.3)
    axes[-1][0].set_xlabel("verdict (in order; 0 = before the agent's first change)" if start_gap else
                           "verdict (in order)")
    _shift_ticks(axes[-1][0], timeline, offset)
    axes[0][0].set_title(title, fontsize=10)
    # Fixed margins: tight_layout measures every tick label and costs more than the rest of the report.
    fig.subplots_adjust(left=0.09, right=0.98, top=0.93, bottom=0.2 if rows == 2 else 0.25, hspace=0.12)
    return fig, ""


def _positive(value: Any) -> float:
    """Log axes cannot show 0, inf or a missing value: those become gaps."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) and v > 0 else math.nan


def _shift_ticks(ax: Any, timeline: list[dict[str, Any]], offset: int) -> None:
    """At most ~12 ticks, labelled with the shift (and turn) of the verdict there."""
    if not timeline:
        return
    step = max(1, len(timeline) // 12)
    idx = list(range(0, len(timeline), step))
    ax.set_xticks([i + offset for i in idx], [timeline[i]["label"] for i in idx], fontsize=7, rotation=30)
