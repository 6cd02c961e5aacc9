"""Words and JSON for a verdict's oracle results: the one-line summary, the push-back lines quoting the worst
offenders, and strict JSON (non-finite numbers written as "inf"/"nan" strings).

A held-out entry as the agent sees it (verify/oracle/exam.py) has only its name and its word (``result``): pass,
a coarse band, or that it is evaluated at a claim of done; no figure of it is ever quoted here.
"""
from __future__ import annotations

import math

def fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if math.isinf(value):
        return "inf"
    return f"{value:.2e}" if value and (abs(value) < 1e-2 or abs(value) >= 1e4) else f"{value:.3g}"


def fmt_ratio(value: float) -> str:
    """Error over tolerance, as "0.42", "3.2" or "1810" (times the tolerance)."""
    value = float(value)
    if math.isfinite(value) and 10 <= value < 1e6:
        return f"{value:.0f}"
    return fmt(value)


def x_label(entry: dict, x: float, row: int | None = None) -> str:
    """Where a point is, in the words of the file: "z=2.5" by the x column's header name; "row 101 (x=2.5)" where
    x is a column without a name (rows count from 0, as numpy does); "row 101" without an x column."""
    if entry.get("x") is None:
        return f"row {int(x)}"
    name = entry.get("x_name", entry["x"] if isinstance(entry["x"], str) and not entry["x"].isdigit() else None)
    if name is not None:
        return f"{name}={x:.6g}"
    return f"row {row} (x={x:.6g})" if row is not None else f"x={x:.6g}"


def where(entry: dict, col: dict, which: str = "worst") -> str:
    """Where a column's (or a field's) point is: a field's element by coordinates and index, as the comparer
    located it; a table's by its x (``x_label``)."""
    if col.get(f"where_{which}"):
        return str(col[f"where_{which}"])
    return x_label(entry, col[f"x_{which}"], col.get(f"row_{which}"))


def worst_words(entry: dict, col: dict) -> str:
    """The worst point in numbers: its relative error beside |cand - ref|, |ref| and atol there (a relative error
    alone says nothing where the reference is near zero), or the absolute error where the reference is 0."""
    at = where(entry, col)
    gap = fmt(float(col.get("abs_worst", col["max_abs"])))  # float(): a report read back holds "inf" as text
    if col.get("ref_zero_worst"):
        return f"at {at} the reference is 0: |cand - ref| = {gap} vs atol {col['atol']:g}"
    ref = col.get("ref_worst")
    size = f", |ref| = {fmt(abs(float(ref)))}" if ref is not None else ""
    return f"rel err {fmt(float(col['rel_worst']))} vs rtol {col['rtol']:g} at {at}: |cand - ref| = {gap}{size}, " \
           f"atol {col['atol']:g}"


def bound_words(col: dict) -> str:
    """The rule a point is held to, as numpy.isclose writes it (|a - b| <= atol + rtol * |b|), in the comparison's
    own mode and scale: "|cand - ref| <= atol + rtol x |ref| (atol 0, rtol 0.001)"."""
    scale = col.get("scale", "reference")
    size = "|ref|" if scale == "reference" else "max|ref|" if scale == "max" else \
        f"{abs(float(scale)):g}" if isinstance(scale, (int, float)) else f"|{scale}|"
    rule = {"either": f"max(atol, rtol x {size})", "both": f"min(atol, rtol x {size})"}.get(
        col.get("tolerance", "sum"), f"atol + rtol x {size}")
    return f"|cand - ref| <= {rule} (atol {float(col['atol']):g}, rtol {float(col['rtol']):g})"


def passing_words(entry: dict, col: dict) -> str:
    """A comparison that held: the bound, and its worst point by the share of its own tolerance there."""
    gap = fmt(float(col.get("abs_worst", col["max_abs"])))
    ref = col.get("ref_worst")
    size = f", |ref| = {fmt(abs(float(ref)))}" if ref is not None else ""
    return (f"held {bound_words(col)} at every point; worst {fmt_ratio(col['ratio'])} of its tolerance at "
            f"{where(entry, col)} (|cand - ref| = {gap}{size})")


def nonfinite_words(entry: dict, col: dict, counted: bool = True) -> str | None:
    """The candidate's first NaN or inf where the reference is a number, said as such and counted; None if none."""
    if "cand_first_nonfinite" not in col:
        return None
    value = float(col["cand_first_nonfinite"])
    word = "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    count = int(col["nonfinite_where_finite"])
    words = f"{word} at {where(entry, col, 'first_nonfinite')} where the reference is " \
            f"{fmt(float(col['ref_first_nonfinite']))}"
    if counted:
        words += f" ({count} non-finite value{'s' * (count != 1)} in the candidate where the reference is finite)"
    return words


def _column_line(entry: dict, col: dict) -> str:
    head = f"{'held-out ' if entry.get('heldout') else ''}{entry['name']}"
    head += "" if col.get("kind") == "field" else f" / {col['column']}"  # a field is its comparison
    bad = nonfinite_words(entry, col)
    if bad:
        return (f"{head}: {bad}; {col['failing']} of {col['points']} points fail vs rtol {col['rtol']:g}, atol "
                f"{col['atol']:g}")
    return (f"{head}: {worst_words(entry, col)} ({fmt_ratio(col['ratio'])}x the tolerance); {col['failing']} of "
            f"{col['points']} points fail" + (f"; {col['storage']}" if col.get("storage") else ""))


def _entry_lines(entry: dict) -> list[str]:
    prefix = f"{'held-out ' if entry.get('heldout') else ''}{entry['name']}"
    if "result" in entry:  # a held-out comparison: its word only
        return [f"{prefix}: {entry['result']}" + (f" ({entry['error']})" if entry.get("error") else "")]
    if entry.get("error"):
        return [f"{prefix}: {entry['error']}"]
    lines = []
    unc = entry.get("uncovered")
    if unc:
        lines.append(f"{prefix}: {unc['count']} reference points are not covered by the candidate "
                     f"({x_label(entry, unc['x_min'], unc.get('row_min'))} to "
                     f"{x_label(entry, unc['x_max'], unc.get('row_max'))}; the candidate spans "
                     f"{unc['candidate_x'][0]:.6g} to {unc['candidate_x'][1]:.6g})")
    failing = sorted((c for c in entry.get("columns", []) if not c["passed"]), key=lambda c: -c["ratio"])
    return lines + [_column_line(entry, c) for c in failing]


def pushback_lines(entries: list[dict], limit: int = 6) -> list[str]:
    """The worst offenders first; ``entries`` are already redacted (see ``visible``)."""
    failing = sorted((e for e in entries if e["passed"] is False), key=lambda e: -_ratio(e))
    lines = [line for e in failing for line in _entry_lines(e)]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more (see the oracle report)"]
    return lines


def _ratio(entry: dict) -> float:
    if "result" in entry:  # held-out: ordered after every measured comparison, whatever its band
        return -1.0
    value = entry.get("ratio")
    return math.inf if value is None else float(value)


def _worst_phrase(entry: dict) -> str:
    prefix = f"{'held-out ' if entry.get('heldout') else ''}{entry['name']}"
    if "result" in entry:
        return f"{prefix} {entry['result']}"
    if entry.get("error"):
        return f"{prefix}: {entry['error']}"
    cols = entry.get("columns") or []
    if not cols:
        return prefix
    col = max(cols, key=lambda c: c["ratio"])
    if entry.get("uncovered") and col["ratio"] <= 1:
        return f"{prefix}: {entry['uncovered']['count']} reference points not covered"
    what = "" if col.get("kind") == "field" else f" {col['column']}"
    bad = nonfinite_words(entry, col, counted=False)
    if bad:  # never "inf > rtol": the candidate is not a number there
        return f"{prefix}{what} {bad}"
    if not float(col["ratio"]) and not col.get("nonfinite"):  # bit for bit: no point is worse than another
        return f"{prefix}{what} equal to its reference at every point"
    if col["ratio"] <= 1:  # the bound that held, never "0.0499 <= rtol 0.001"
        return f"{prefix}{what} {passing_words(entry, col)}"
    if col.get("ref_zero_worst"):  # no relative error to quote: the absolute one against atol
        return (f"{prefix}{what} abs err {fmt(col.get('abs_worst', col['max_abs']))} > atol {col['atol']:g} "
                f"where the reference is 0, at {where(entry, col)}")
    sign = ">"
    line = f"{prefix}{what} {fmt(col['rel_worst'])} {sign} rtol {col['rtol']:g} at {where(entry, col)}"
    if col["ratio"] > 1 and "ref_worst" in col:  # a failing worst point: its absolute error and |ref| beside
        line += (f", |cand - ref| = {fmt(float(col.get('abs_worst', col['max_abs'])))}, |ref| = "
                 f"{fmt(abs(float(col['ref_worst'])))}, atol {col['atol']:g}")
    return line + (f"; {col['storage']}" if col.get("storage") else "")


def summary_line(entries: list[dict], problems: list[str]) -> str:
    later = [e for e in entries if e["passed"] is None]  # held-out, told only at a claim of done
    entries = [e for e in entries if e["passed"] is not None]
    failing = [e for e in entries if not e["passed"]]
    tail = f" ({len(later)} held-out: {later[0]['result']})" if later else ""
    if not entries and later:
        return f"oracle: {len(later)} held-out comparison(s), {later[0]['result']}" + "".join(f"; {p}" for p in problems)
    if not entries:
        text = "oracle: no comparisons configured"
    elif failing:
        worst = max(failing, key=_ratio)
        text = f"oracle: {len(failing)} of {len(entries)} comparisons fail (worst: {_worst_phrase(worst)})"
    else:
        worst = max(entries, key=_ratio)
        text = f"oracle: all {len(entries)} comparisons pass (worst: {_worst_phrase(worst)})" if _ratio(worst) else \
            f"oracle: all {len(entries)} comparisons pass, equal to their references at every point"
        if problems:  # what fails the check leads: a FAIL that opened with "all pass" read as a pass
            count = f"{len(problems)} finding{'s' * (len(problems) > 1)}"
            return (f"oracle: {count} {'fails' if len(problems) == 1 else 'fail'} it: " + "; ".join(problems)
                    + f" (the comparisons alone: all {len(entries)} within tolerance{tail})")
    return text + tail + "".join(f"; {p}" for p in problems)


def strict_json(value):
    """A copy with every non-finite float as a string, so the report is standard JSON (float() reads it)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value
