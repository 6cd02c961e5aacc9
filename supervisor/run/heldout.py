"""The user's record of a run's held-out exam (verify/oracle/exam.py writes it): each verdict's full held-out
figures in a private folder outside the workspace, which the agent's namespace hides, and the lines the user's
views (status, log, report, TUI) show from it and from the fold's account (evaluations, bits released).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from nightshift.supervisor.run.paths import heldout_store


def _where(entry: dict, x: float) -> str:
    return f"{entry.get('x')}={x:.10g}" if entry.get("x") is not None else f"row {int(x)}"


def private_folder(run_root: Path) -> Path:
    """Where a run's private held-out reports live: beside its held-out copies, outside the workspace."""
    return heldout_store(Path(run_root) / "references") / "reports"


def _name(shift: int | None, turn: int | None) -> str:
    return f"{shift}-t{turn}.oracle.json"


def read_private(run_root: Path, shift: int | None, turn: int | None) -> dict | None:
    """A verdict's full held-out figures (the user's views), or None when there are none."""
    return _read(private_folder(run_root) / _name(shift, turn))


def check_report(run_root: Path, check: str) -> Path:
    """Where a fleet keeps the full held-out figures of its own check ``check`` (a folder name of fleet_check)."""
    return private_folder(run_root) / f"{check}.oracle.json"


def read_check_private(run_root: Path, check: str) -> dict | None:
    return _read(check_report(run_root, check))


def read_private_many(run_root: Path, keys: list[tuple[int | None, int | None]]) -> dict[tuple, dict]:
    """{(shift, turn): figures} for the verdicts among ``keys`` that have them: the folder is found and listed once
    (the report asks for thousands of verdicts; finding the folder costs a path resolution each time)."""
    folder = private_folder(run_root)
    try:
        present = {entry.name for entry in os.scandir(folder)}
    except OSError:
        return {}
    out = {}
    for key in keys:
        if _name(*key) in present:
            found = _read(folder / _name(*key))
            if found is not None:
                out[key] = found
    return out


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def budget_line(held: dict | None, budget: float | None = None) -> str | None:
    """"held-out: 6 evaluations, at most 12 bits released" (None when the run has released nothing yet)."""
    if not held or not (held.get("evaluations") or held.get("withheld")):
        return None
    bits = float(held.get("bits") or 0.0)
    text = f"held-out: {held.get('evaluations', 0)} evaluations, at most {bits:.3g} bits released"
    if budget:
        text += f" (budget {budget:g})"
    if held.get("withheld"):
        text += f"; {held['withheld']} claim(s) answered with nothing (budget spent)"
    return text


def full_lines(private: dict | None) -> list[str]:
    """The user's lines for a verdict's held-out comparisons, at full precision."""
    if not private:
        return []
    out = []
    for entry in private.get("comparisons", []):
        head = f"held-out {entry['name']}: {'pass' if entry.get('passed') else 'FAIL'}"
        if entry.get("error"):
            out.append(f"{head}: {entry['error']}")
            continue
        cols = entry.get("columns") or []
        worst = max(cols, key=lambda c: float(c.get("ratio", 0))) if cols else None
        if worst is None:
            out.append(head)
            continue
        out.append(f"{head}: worst {worst['column']} at {_where(entry, float(worst['x_worst']))}: "
                   f"rel err {float(worst['rel_worst']):.10g}, {float(worst['ratio']):.10g}x the tolerance; "
                   f"{worst['failing']} of {worst['points']} points fail" + _numbers(worst))
    return out


def _numbers(col: dict) -> str:
    """The worst point's |cand - ref|, |ref| and atol (full precision: this log is the user's alone); "" for a record
    written before the oracle kept them."""
    if "ref_worst" not in col:
        return ""
    return (f" (|cand - ref| = {float(col['abs_worst']):.10g}, |ref| = {abs(float(col['ref_worst'])):.10g}, atol "
            f"{float(col['atol']):g})")
