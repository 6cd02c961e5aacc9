"""The calibration gate (calibrate.py) for a comparison over an N-d field: the reference against itself passes,
ten times the tolerance at one element fails there (named by index), and a constant field fails.

A big field is calibrated on its first ``LIMIT`` elements (whole slabs of the first axis): the tolerance is the
same rule at every element, so a slab tells what the whole would.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nightshift.supervisor.verify.oracle.calibrate import FACTOR, Calibration, zero_tolerance
from nightshift.supervisor.verify.oracle.calibrate_decades import decade_lines, nonfinite_reference
from nightshift.supervisor.verify.oracle.compare import _tolerances
from nightshift.supervisor.verify.oracle.pointwise import point_tolerance
from nightshift.supervisor.verify.oracle.roundoff import measure, precision
from nightshift.supervisor.verify.oracle.field import Field, open_field
from nightshift.supervisor.verify.oracle.field_compare import _scale_of, compare_fields
from nightshift.supervisor.verify.oracle.table import OracleInputError

if TYPE_CHECKING:
    from nightshift.supervisor.config.oracle import CompareConfig

LIMIT = 1 << 22


def calibrate_field(cfg: CompareConfig, path: Path, part: str | None) -> Calibration | None:
    """None when the reference is a table (calibrate.py takes it)."""
    with open_field(path, part, "reference") as ref:
        if ref is None:
            return None
        per_row = max(1, ref.size // max(ref.shape[0], 1))
        rows = max(1, min(ref.shape[0], LIMIT // per_row))
        values = np.asarray(ref.source[:rows], dtype=np.float64)
        ref_dtype = ref.dtype
        slab = Field(ref.where, values, values.shape, values.dtype, ref.dims,
                     [ref.coords[0][:rows] if ref.coords and ref.coords[0] is not None else None, *ref.coords[1:]])
    label = (part or Path(path).name).strip("/")
    found = Calibration(cfg.name)
    said = nonfinite_reference(cfg.name, values.reshape(-1), "element",
                               lambda i: "index (" + ", ".join(str(int(j)) for j in np.unravel_index(i, values.shape))
                               + ")")
    if said:
        found.problems.append(said)
        return found
    try:
        same = compare_fields(cfg, slab, slab, label)
        rtol, atol, scale = _tolerances(cfg, label, label)
        fixed = _scale_of(cfg, scale, slab)
    except OracleInputError as exc:
        found.problems.append(f"{cfg.name}: cannot run: {exc}")
        return found
    if not same["passed"]:
        found.problems.append(f"{cfg.name}: the reference compared with itself fails; check scale")
        return found
    found.checked.append("itself passes")
    flat = values.reshape(-1)
    tol = point_tolerance(np.abs(flat) if fixed is None else np.full(flat.shape, fixed), rtol, atol, cfg.tolerance)
    per_row = max(1, flat.size // max(values.shape[0] if values.ndim else 1, 1))
    first = slab.coords[0] if slab.coords and slab.coords[0] is not None else np.arange(flat.size // per_row)
    problems, notes = decade_lines(cfg.name, flat, np.abs(flat) if fixed is None else np.full(flat.shape, fixed),
                                   rtol, atol, cfg.tolerance, np.repeat(np.asarray(first, dtype=float), per_row),
                                   (slab.dims[0] if slab.dims and slab.coords and slab.coords[0] is not None
                                    else "index along axis 0"), unit="element",
                                   floor=lambda: measure([values], precision(ref_dtype), values.size))
    found.problems += problems
    found.notes += notes
    usable = np.flatnonzero(np.isfinite(tol) & (tol > 0))
    if not len(usable):
        found.problems.append(zero_tolerance(cfg.name, flat, "element", cfg.tolerance))
        return found
    at = int(usable[len(usable) // 2])
    moved = flat.copy()
    moved[at] += FACTOR * tol[at]
    result = compare_fields(cfg, _like(slab, moved), slab, label)
    expected = ", ".join(str(int(i)) for i in np.unravel_index(at, values.shape))
    if result["passed"]:
        found.problems.append(f"{cfg.name}: cannot fail: a change of {FACTOR:g}x the tolerance at ({expected}) passed")
    elif result["failing"] != 1 or result["row_worst"] != at:
        found.problems.append(f"{cfg.name}: a change at ({expected}) was reported at {result['where_worst']} "
                              f"({result['failing']} elements failing)")
    if not np.any(flat):
        found.problems.append(f"{cfg.name}: the reference field is all zeros: an all-zero candidate matches it "
                              "whatever the solver does (a physical zero is fine; check it is the field you mean)")
        return found
    for words, level in (("all zeros", 0.0), ("its median", float(np.median(flat)))):
        if compare_fields(cfg, _like(slab, np.full_like(flat, level)), slab, label)["passed"]:
            found.problems.append(f"{cfg.name}: cannot fail: a constant field ({words}) passes; the tolerance is "
                                  "wider than the data's spread (lower rtol/atol)")
            break
    if found.ok:
        found.checked.append(f"{FACTOR:g}x the tolerance at one element is caught there; a constant fails")
    return found


def _like(slab: Field, flat: np.ndarray) -> Field:
    return Field(slab.where, flat.reshape(slab.shape), slab.shape, flat.dtype, slab.dims, slab.coords)
