"""Reading a verdict's oracle report (``shifts/<n>/t<turn>.oracle/oracle.json``) defensively, as table rows.

The report is written by the oracle (supervisor/oracle/report: comparisons[].columns[] with max_rel, x_max_rel,
max_abs, median_rel, p95_rel, points, failing, rtol, passed); the TUI also accepts a few other likely names and
shows what it cannot read as a note, so a change in the report never breaks the screen.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALIASES = {
    "max_rel": ("max_rel", "max_rel_err", "max_relative", "max_rel_error", "rel_max", "worst_rel"),
    "max_abs": ("max_abs", "max_abs_err", "max_absolute", "max_abs_error", "abs_max"),
    "where": ("where_max_rel", "x_max_rel", "x_worst", "x_at_max", "where", "worst_x", "at"),
    "median": ("median_rel", "median", "rel_median", "median_rel_err"),
    "p95": ("p95_rel", "p95", "rel_p95", "p95_rel_err"),
    "points": ("points", "n_points", "compared", "n", "count"),
    "failing": ("failing", "points_failing", "n_failing", "n_fail", "fail_count"),
    "passed": ("passed", "pass", "ok"),
    "tol": ("rtol", "tolerance", "tol"),
}


@dataclass
class OracleRow:
    comparison: str
    column: str
    passed: bool | None
    max_rel: Any = None
    max_abs: Any = None
    where: Any = None
    median: Any = None
    p95: Any = None
    points: Any = None
    failing: Any = None
    tol: Any = None
    note: str = ""


def _pick(d: dict[str, Any], field: str) -> Any:
    for key in ALIASES[field]:
        if key in d:
            return d[key]
    return None


def _columns(comp: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    cols = comp.get("columns") or comp.get("results") or []
    if isinstance(cols, dict):
        return [(str(k), v if isinstance(v, dict) else {"max_rel": v}) for k, v in cols.items()]
    out = []
    for i, col in enumerate(cols if isinstance(cols, list) else []):
        if isinstance(col, dict):
            # a field is its comparison: one row, said to be a field (its location is in "where_max_rel")
            name = "(field)" if col.get("kind") == "field" else str(col.get("column", col.get("name", i)))
            out.append((name, col))
    return out


def _comparisons(report: Any) -> list[dict[str, Any]]:
    comps = report.get("comparisons", report.get("compare", [])) if isinstance(report, dict) else report
    if isinstance(comps, dict):
        comps = [{"name": k, **v} if isinstance(v, dict) else {"name": k} for k, v in comps.items()]
    return [c for c in comps if isinstance(c, dict)] if isinstance(comps, list) else []


def _worst_first(cols: list[tuple[str, dict[str, Any]]], comp_tol: Any) -> list[tuple[str, dict[str, Any]]]:
    """A table's columns as one: its worst column (failing first, then error over tolerance), named as such, with
    the failing points of every column (issue 29: one line per comparison; the columns when asked)."""
    def badness(item: tuple[str, dict[str, Any]]) -> tuple:
        col = item[1]
        tol = _as_float(_pick(col, "tol") or comp_tol) or 1.0
        return (_pick(col, "passed") is False, (_as_float(_pick(col, "max_rel")) or 0.0) / tol)
    name, worst = max(cols, key=badness)
    merged = dict(worst)
    for field, key in (("failing", "failing"), ("points", "points")):  # every column's, as "failing/points" reads
        values = [_as_float(_pick(c, field)) for _, c in cols]
        if all(v is not None for v in values):
            merged[key] = int(sum(values))
    if any(_pick(c, "passed") is False for _, c in cols):
        merged["passed"] = False
    return [(f"{name} (worst of {len(cols)})", merged)]


def rows_from_report(report: Any, columns: bool = False) -> list[OracleRow]:
    """A row per comparison (a table by its worst column); ``columns``: a row per column of each table."""
    rows: list[OracleRow] = []
    for comp in _comparisons(report):
        name = str(comp.get("name", "?"))
        comp_tol = _pick(comp, "tol")
        comp_passed = _pick(comp, "passed")
        cols = _columns(comp)
        if len(cols) > 1 and not columns:
            cols = _worst_first(cols, comp_tol)
        error = comp.get("error") or comp.get("message")
        if not cols:
            rows.append(OracleRow(name, "-", bool(comp_passed) if comp_passed is not None else None,
                                  tol=comp_tol, note=str(error or "no column results")))
            continue
        for col_name, col in cols:
            passed = _pick(col, "passed")
            rows.append(OracleRow(
                name, col_name, bool(passed) if passed is not None else (bool(comp_passed) if comp_passed is not None else None),
                max_rel=_pick(col, "max_rel"), max_abs=_pick(col, "max_abs"), where=_pick(col, "where"),
                median=_pick(col, "median"), p95=_pick(col, "p95"), points=_pick(col, "points"),
                failing=_pick(col, "failing"), tol=_pick(col, "tol") or comp_tol,
                note=str(col.get("error") or error or "")))
    return rows


def with_private(report: Any, private: dict[str, Any] | None) -> Any:
    """The report with its held-out entries (what the agent may see) replaced by the user's full figures, kept in
    the private store the agent's namespace hides (supervisor/verify/oracle/exam.py)."""
    if not private or not isinstance(report, dict):
        return report
    full = {e.get("name"): e for e in private.get("comparisons", []) if isinstance(e, dict)}
    return {**report, "comparisons": [full.get(c.get("name"), c) if isinstance(c, dict) else c
                                      for c in _comparisons(report)]}


def load_report(path: Path | None, private: dict[str, Any] | None = None,
                columns: bool = False) -> tuple[list[OracleRow], str]:
    """(rows, note): the note says why there are no rows (no verdict yet, unreadable report...)."""
    if path is None:
        return [], "no verdict yet"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], f"no oracle report at {path.parent.name}/{path.name}"
    except (OSError, ValueError) as exc:
        return [], f"oracle report {path.name} unreadable: {exc}"
    rows = rows_from_report(with_private(report, private), columns)
    return rows, "" if rows else "the oracle report has no comparisons"


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return str(value)
        if isinstance(value, int):
            return str(value)
        return f"{value:.{digits}g}" if 1e-3 <= abs(value) < 1e5 or value == 0 else f"{value:.{digits - 1}e}"
    return str(value)


def history(metrics: list[dict[str, Any]], baseline: dict[str, Any] | None = None
            ) -> dict[str, list[tuple[int, float | None]]]:
    """Per comparison, (verdict index, worst error / tolerance) from the fold's ``metrics`` list, preceded by the
    preflight's figures when the run has them (``baseline``: the oracle before the agent's first change).

    ``values`` may map a comparison to a number or to a dict holding it; the headline is kept as "all".
    """
    series: dict[str, list[tuple[int, float | None]]] = {}
    before = [{"metric": baseline.get("metric"), "values": baseline.get("metrics") or {}}] if baseline else []
    for i, entry in enumerate(before + list(metrics)):
        values = entry.get("values") or {}
        if isinstance(values, dict):
            for name, v in values.items():
                if isinstance(v, dict):
                    v = v.get("metric", v.get("ratio", v.get("worst")))
                series.setdefault(str(name), []).append((i, _as_float(v)))
        if not values:
            series.setdefault("all", []).append((i, _as_float(entry.get("metric"))))
    return series


HELD_OUT = " (held out)"
HELDOUT_POINTS = 2000  # held-out figures read for the plot at most (a long run: every k-th verdict, and the last)


def heldout_keys(metrics: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """The (shift, turn) of the verdicts whose held-out figures the plot reads."""
    step = max(1, len(metrics) // HELDOUT_POINTS)
    picked = list(range(0, len(metrics), step)) + ([len(metrics) - 1] if metrics else [])
    return list(dict.fromkeys((metrics[i].get("shift"), metrics[i].get("turn")) for i in picked))


def heldout_series(metrics: list[dict[str, Any]], baseline: dict[str, Any] | None,
                   private: dict[tuple, dict]) -> dict[str, list[tuple[int, float | None]]]:
    """The held-out comparisons' lines, as the report and `nightshift plot` draw them: each verdict's worst error
    over tolerance from the user's private figures (``private``: (shift, turn) -> figures; the fold has none),
    at the same verdict index as ``history`` gives it, named '<comparison> (held out)'."""
    offset = 1 if baseline else 0
    series: dict[str, list[tuple[int, float | None]]] = {}
    for i, entry in enumerate(metrics):
        figures = private.get((entry.get("shift"), entry.get("turn"))) or {}
        for comparison in figures.get("comparisons") or []:
            if isinstance(comparison, dict) and comparison.get("name"):
                series.setdefault(f"{comparison['name']}{HELD_OUT}", []).append(
                    (i + offset, _as_float(comparison.get("ratio"))))
    return series


def _as_float(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
