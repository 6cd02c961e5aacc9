"""The calibration gate: can each comparison tell right from wrong before an unattended hour is spent on it?

For each comparison, with its own reference as the candidate:
- the reference compared with itself passes;
- a copy moved by ten times the tolerance at one point, column by column, fails at exactly that point;
- a constant candidate (all zeros, or the column's median) fails: when it passes, the tolerance is wider than
  the data's spread and the comparison cannot fail. An empty range, and a column whose tolerance is zero
  everywhere (all zeros with only rtol), are named too.
- a perturbation of a few times the relative tolerance fails in every decade of |reference| (calibrate_decades.py:
  where atol dominates, one line names the region; a reference that is itself NaN somewhere is refused).
The comparison code is the oracle's own (compare.py), so what passes here passes in a verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from nightshift.supervisor.verify.oracle.calibrate_decades import decade_lines, nonfinite_reference
from nightshift.supervisor.verify.oracle.compare import _tolerances, _x_name, compare_tables
from nightshift.supervisor.verify.oracle.pointwise import point_tolerance
from nightshift.supervisor.verify.oracle.report import x_label
from nightshift.supervisor.verify.oracle.roundoff import measure, precision
from nightshift.supervisor.verify.oracle.scale import scale_values
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import CompareConfig

FACTOR = 10.0


@dataclass
class Calibration:
    name: str
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what passed, for the ok line
    notes: list[str] = field(default_factory=list)  # worth knowing, not blocking: a region atol dominates

    @property
    def ok(self) -> bool:
        return not self.problems


def _with(ref: Table, index: int, values: np.ndarray) -> Table:
    columns = list(ref.columns)
    columns[index] = values
    return Table(ref.path, list(ref.names), columns)


def _x_values(cfg: CompareConfig, ref: Table) -> np.ndarray:
    return ref.column(cfg.x, "reference") if cfg.x is not None else np.arange(ref.rows, dtype=float)


def calibrate(cfg: CompareConfig, ref: Table) -> Calibration:
    found = Calibration(cfg.name)
    if _nonfinite_columns(cfg, ref, found):
        return found
    try:
        same = compare_tables(cfg, ref, ref)
    except OracleInputError as exc:
        kind = "measures nothing" if exc.kind == "empty range" else "cannot run"
        found.problems.append(f"{cfg.name}: {kind}: {exc}")
        return found
    if not same["passed"]:
        found.problems.append(f"{cfg.name}: the reference compared with itself fails ({same['ratio']:.3g} x the "
                              "tolerance); check x, range and scale")
        return found
    found.checked.append("itself passes")
    x = _x_values(cfg, ref)
    inside = np.ones(ref.rows, dtype=bool) if cfg.range is None else (x >= cfg.range[0]) & (x <= cfg.range[1])
    for column in same["columns"]:
        name = column["column"]
        index = column["index"] if "index" in column else \
            ref.index_of(name, "reference") if name in ref.names else ref.index_of(int(name), "reference")
        key = next((k for k in (cfg.columns or [name]) if str(k) == name or k == index), name)
        values = np.asarray(ref.columns[index], dtype=float)
        rtol, atol, scale = _tolerances(cfg, key, name)
        size = scale_values(scale, values, lambda k: ref.column(k, "reference"))
        tol = point_tolerance(size, rtol, atol, cfg.tolerance)
        floor = (lambda values=values, dtype=ref.columns[index].dtype:
                 measure([values[inside]], precision(dtype), int(inside.sum()), column=True))
        part = slice(None) if cfg.range is None else inside  # a view, not three copies of the column
        problems, notes = decade_lines(f"{cfg.name} {name}", values[part], size[part], rtol, atol, cfg.tolerance,
                                       x[part] if cfg.x is not None else np.flatnonzero(inside).astype(float),
                                       _x_name(cfg, ref) if cfg.x is not None else "row", floor=floor)
        found.problems += problems
        found.notes += notes
        usable = np.flatnonzero(inside & np.isfinite(tol) & (tol > 0) & np.isfinite(values))
        if len(usable) == 0:
            found.problems.append(zero_tolerance(f"{cfg.name} {name}", values[inside], "point", cfg.tolerance))
            continue
        at = int(usable[len(usable) // 2])
        moved = values.copy()
        moved[at] += FACTOR * tol[at]
        _expect_caught(cfg, found, ref, index, moved, name, x[at], at)
        _expect_constant_fails(cfg, found, ref, index, values, name, inside)
    if found.ok:
        found.checked.append(f"{FACTOR:g}x the tolerance at one point is caught there; a constant fails")
    return found


def _nonfinite_columns(cfg: CompareConfig, ref: Table, found: Calibration) -> bool:
    """A compared reference column that is NaN or inf inside the range is refused, by name (its comparison with
    itself would fail there and say only "check x, range and scale")."""
    try:
        x = _x_values(cfg, ref)
        keys = cfg.columns or [i for i in range(len(ref.columns)) if cfg.x is None or i != ref.index_of(cfg.x,
                                                                                                       "reference")]
        inside = np.ones(ref.rows, dtype=bool) if cfg.range is None else (x >= cfg.range[0]) & (x <= cfg.range[1])
        rows = np.flatnonzero(inside)
        entry = {"x": cfg.x, "x_name": _x_name(cfg, ref)}
        for key in keys:
            index = ref.index_of(key, "reference")
            values = np.asarray(ref.columns[index], dtype=float)[rows]
            said = nonfinite_reference(f"{cfg.name} {ref.name_of(index)}", values, "point",
                                       lambda i: x_label(entry, x[rows[i]], int(rows[i])))
            if said:
                found.problems.append(said)
    except OracleInputError:
        return False  # the comparison with itself says what is wrong, in the oracle's words
    return not found.ok


def no_scale(subject: str, finite: int) -> str:
    """The one sentence for a data set with no scale to compare relatively to (init's NEEDS atol and the
    calibration's refusal alike): ``finite`` values of it are finite, and every one of them is zero."""
    if not finite:
        return (f"{subject} has no finite value (every one is NaN or inf): nothing can be compared there; check the "
                "reference file (and the range)")
    return (f"{subject} is zero everywhere: a relative tolerance compares nothing there and any difference at all "
            "fails, so it needs an absolute tolerance; state one in the goal (e.g. \"1e-12 absolute\") and run "
            "`nightshift init` again, or write atol for it in nightshift.toml")


def zero_tolerance(what: str, values: np.ndarray, unit: str, mode: str) -> str:
    """The one line for a comparison nothing but an exact match can pass (no point has a tolerance above zero):
    a reference with no finite value; tolerance = "both" (the smaller of rtol x |reference| and atol) with atol =
    0, or on a reference that is zero everywhere; a reference zero everywhere with no absolute tolerance (init
    derives none from it: how close to zero is zero is the user's word); rtol and atol both 0."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return no_scale(f"{what}: the reference", 0)
    zero = not np.any(finite)
    if mode == "both":
        why, fix = ("the reference is zero everywhere", "use tolerance = \"sum\" or \"either\" with an atol") if zero \
            else ("atol = 0", "set atol")
        return (f"{what}: the tolerance is zero at every {unit} (tolerance = \"both\" takes the smaller of rtol x "
                f"|reference| and atol, and {why}): any difference at all fails; {fix}")
    if zero:
        return no_scale(f"{what}: the reference", int(finite.size))
    return f"{what}: the tolerance is zero at every {unit} (rtol and atol are 0): any difference at all fails; set atol"


def _column_result(result: dict, name: str, index: int) -> dict:
    return next(c for c in result["columns"] if c.get("index", index) == index and c["column"] == name)


def _expect_caught(cfg, found: Calibration, ref: Table, index: int, moved: np.ndarray, name: str, x_at: float,
                   row: int):
    try:
        entry = {"x": cfg.x, "x_name": _x_name(cfg, ref)}  # how the push-back names a point (report.x_label)
        where = x_label(entry, x_at, row)
        result = _column_result(compare_tables(cfg, _with(ref, index, moved), ref), name, index)
    except OracleInputError as exc:
        found.problems.append(f"{cfg.name} {name}: a perturbed copy could not be compared: {exc}")
        return
    if result["passed"]:
        found.problems.append(f"{cfg.name} {name}: cannot fail: a change of {FACTOR:g}x the tolerance at "
                              f"{where} passed")
    elif result["failing"] != 1 or not np.isclose(result["x_worst"], x_at):
        found.problems.append(f"{cfg.name} {name}: a change at {where} was reported at "
                              f"{x_label(entry, result['x_worst'], result.get('row_worst'))} ({result['failing']} "
                              "points failing)")


def _expect_constant_fails(cfg, found: Calibration, ref: Table, index: int, values: np.ndarray, name: str,
                           inside: np.ndarray):
    finite = values[inside & np.isfinite(values)]
    if len(finite) and not np.any(finite):
        found.problems.append(f"{cfg.name} {name}: the reference column is all zeros: an all-zero candidate "
                              "matches it exactly whatever the solver does")
        return
    for label, level in (("all zeros", 0.0), ("its median", float(np.median(finite)) if len(finite) else 0.0)):
        try:
            result = _column_result(compare_tables(cfg, _with(ref, index, np.full_like(values, level)), ref), name,
                                    index)
        except OracleInputError:
            continue
        if result["passed"]:
            found.problems.append(f"{cfg.name} {name}: cannot fail: a constant candidate ({label}) passes; the "
                                  "tolerance is wider than the data's spread (lower rtol/atol)")
            return
