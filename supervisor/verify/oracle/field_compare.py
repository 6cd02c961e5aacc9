"""One field against its reference, as the field tools compare (h5diff, nccmp, numpy's assert_allclose): every
element, one result, the worst element located by its index and its coordinates.

Streamed: both fields are read a block of the first axis at a time (``BLOCK_ELEMENTS`` elements), so the peak is
a few blocks plus the relative errors kept as float32 for the median and p95 (half the field's size). A point
where the reference is zero and the candidate too has relative error 0 (never 0/0); where only the reference is
zero, the relative error is infinite and the line quotes the absolute error instead.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nightshift.supervisor.verify.oracle.compare import _tolerances
from nightshift.supervisor.verify.oracle.pointwise import _nan_to_inf, _over, _percentiles, point_ratios
from nightshift.supervisor.verify.oracle.pointwise import first_nonfinite, values_at
from nightshift.supervisor.verify.oracle.evidence import distinct_count
from nightshift.supervisor.verify.oracle.field import Field, location, open_field
from nightshift.supervisor.verify.oracle.table import OracleInputError, table_from_array

if TYPE_CHECKING:
    from nightshift.supervisor.config.oracle import CompareConfig
    from nightshift.supervisor.verify.oracle.embedded import Scan

SCAN_VALUES = 1 << 20  # of a field, the embedded-values scan looks at the first this many values
BLOCK_ELEMENTS = 1 << 19  # 4 MB of float64 per temporary: the dozen passes over a block stay in cache


def _same_shape(cand: Field, ref: Field, cfg: CompareConfig, label: str) -> None:
    if cand.shape != ref.shape:
        raise OracleInputError(f"{cand.where} has shape {cand.shape} and its reference {ref.shape}"
                               f"{stated_lengths(cand, ref)}{_along(cand, ref, cfg, label)}; write the candidate on "
                               "the reference's grid (same dimensions, same order)", "both", "wrong shape")
    for axis, (a, b) in enumerate(zip(cand.coords, ref.coords)):
        if a is None or b is None:
            continue
        off = ~(np.abs(a - b) <= 1e-9 * np.maximum(np.abs(a), np.abs(b)) + 1e-300)
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise OracleInputError(f"{cand.where}: its coordinate {ref.dims[axis]!r} differs from the reference's "
                                   f"at index {i} ({a[i]:.10g} against {b[i]:.10g}); write the candidate on the "
                                   "reference's grid", "both", "grids differ")


def _scale_of(cfg: CompareConfig, scale, ref: Field) -> float | None:
    """None: relative to the reference at each point; else the one number every point is relative to."""
    if scale == "reference":
        return None
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        return abs(float(scale))
    if scale == "max":
        return max((float(np.nanmax(np.abs(block))) if block.size else 0.0 for _, block in _blocks(ref)), default=0.0)
    raise OracleInputError(f"scale {scale!r} names columns, and a field has none; use 'reference', 'max' or a "
                           "number", "both", "bad scale")


def _blocks(found: Field):
    per_row = int(np.prod(found.shape[1:])) if len(found.shape) > 1 else 1
    rows = max(1, BLOCK_ELEMENTS // max(per_row, 1))
    for lo in range(0, found.shape[0], rows):
        block = np.asarray(found.source[lo:lo + rows], dtype=np.float64).reshape(-1)
        # the comparer writes over its blocks: a numpy source (a memory-mapped .npy, an .npz member, a slab in
        # memory) gives views of itself, copied; h5py and netCDF4 give fresh arrays
        yield lo * per_row, block.copy() if isinstance(found.source, np.ndarray) else block


def compare_fields(cfg: CompareConfig, cand: Field, ref: Field, label: str) -> dict:
    """The comparison's result: one entry in ``columns`` (the field), with ``where_*`` locations."""
    _same_shape(cand, ref, cfg, label)
    rtol, atol, scale = _tolerances(cfg, label, label)
    fixed = _scale_of(cfg, scale, ref)
    total = ref.size
    rel_all = np.empty(total, dtype=np.float32)  # for the median and p95: half the field, not all of it
    worst = i_abs = i_rel = failing = nonfinite = where_finite = nan = 0
    first_bad = None  # the first element where the candidate is NaN or inf and the reference is finite
    ratio_at = abs_at = rel_at = -math.inf
    rel_worst = math.nan
    only_rtol = atol == 0 and rtol > 0 and cfg.tolerance in ("sum", "either")
    for (lo, c), (_, r) in zip(_blocks(cand), _blocks(ref)):
        if np.isnan(r.sum()):
            bad = lo + int(np.flatnonzero(np.isnan(r))[0])
            raise OracleInputError(f"{ref.where}: the reference holds NaN at {_at(ref, bad)}; a reference must be "
                                   "a number everywhere: fix the reference",
                                   "reference", "NaN in the reference")
        with np.errstate(all="ignore"):
            if not np.isfinite(c.sum()):
                bad = ~np.isfinite(c)
                nonfinite += int(bad.sum())
                nan += int(np.isnan(c).sum())
                bad &= np.isfinite(r)  # as compare.py counts them: an inf the reference holds too is no fault here
                where_finite += int(bad.sum())
                if first_bad is None and where_finite:
                    first_bad = lo + int(np.flatnonzero(bad)[0])
            diff = np.subtract(c, r, out=c)  # c is not needed after this
            np.abs(diff, out=diff)
        _nan_to_inf(diff)
        at_abs = int(np.argmax(diff))
        if diff[at_abs] > abs_at:
            i_abs, abs_at = lo + at_abs, float(diff[at_abs])
        s = np.abs(r, out=r) if fixed is None else np.full(len(r), fixed)  # r is not needed after this
        if only_rtol:  # the error over tolerance is the relative error over rtol: one ratio array, not two
            rel = _over(diff, s, into_den=True)  # 0 where both are zero; inf where only the reference is
            _nan_to_inf(rel)
            at = at_rel = int(np.argmax(rel))
            if rel[at] / rtol > ratio_at:
                worst, ratio_at, rel_worst = lo + at, float(rel[at] / rtol), float(rel[at])
            failing += int(np.count_nonzero(rel > rtol))
        else:
            ratio = point_ratios(diff, s, rtol, atol, cfg.tolerance)  # leaves s as it is
            at = int(np.argmax(ratio))
            better = ratio[at] > ratio_at
            if better:
                worst, ratio_at = lo + at, float(ratio[at])
            failing += int(np.count_nonzero(ratio > 1))
            del ratio
            rel = _over(diff, s, into_den=True)
            _nan_to_inf(rel)
            at_rel = int(np.argmax(rel))
            if better:
                rel_worst = float(rel[at])
        if rel[at_rel] > rel_at:
            i_rel, rel_at = lo + at_rel, float(rel[at_rel])
        rel_all[lo:lo + len(rel)] = rel
    found = {"column": label, "kind": "field", "rtol": rtol, "atol": atol, "scale": scale,
             "tolerance": cfg.tolerance, "points": total, "failing": failing, "nonfinite": nonfinite,
             "max_abs": abs_at, "x_max_abs": float(i_abs), "row_max_abs": i_abs, "where_max_abs": _at(ref, i_abs),
             "ratio": ratio_at, "x_worst": float(worst), "row_worst": worst, "where_worst": _at(ref, worst),
             "index_worst": list(_index(ref, worst)), "coords_worst": _coords(ref, worst),
             "max_rel": rel_at, "x_max_rel": float(i_rel), "row_max_rel": i_rel, "where_max_rel": _at(ref, i_rel),
             "rel_worst": rel_worst, "passed": failing == 0}
    found.update(_quoted(cand, ref, worst, first_bad, where_finite), nan=nan)
    storage = storage_words(cand, rtol, atol) if failing else None
    if storage:
        found["storage"] = storage
    found["median_rel"], found["p95_rel"] = _percentiles(rel_all)
    del rel_all
    if ratio_at == 0:  # every element equal: is that a copy, or values that carry no information?
        found["distinct"] = distinct_count(block for _, block in _blocks(ref))
    return found


def field_entry(comp: CompareConfig, ref_path: Path, ref_part: str | None, cand_path: Path, cand_part: str | None,
                scan: Scan | None) -> dict | None:
    """What a comparison of an N-d reference adds to its entry (one field over all its elements); None when the
    reference is a table. ``cand_path``: the candidate as the oracle checked and opened it (sides.opened_candidate: a
    missing one never gets here). Raises OracleInputError, one line, for anything that cannot be compared."""
    with open_field(ref_path, ref_part, "reference") as ref:
        if ref is None:
            return None
        with open_field(cand_path, cand_part, "candidate") as cand:
            if cand is None:
                raise OracleInputError(f"{comp.candidate} is not an array of {len(ref.shape)} dimensions like its "
                                       f"reference {ref.shape}; write the field as the reference has it", "both",
                                       "wrong shape")  # "both": it quotes the reference's shape
            if scan is not None:  # the embedded-values scan: the field's first values, as rows of its last axis
                rows = min(ref.shape[0], max(1, SCAN_VALUES // max(1, ref.size // max(ref.shape[0], 1))))
                slab = np.asarray(ref.source[:rows], dtype=float)
                scan.take(ref_path, table_from_array(ref.where, slab.reshape(-1, ref.shape[-1])))
            result = compare_fields(comp, cand, ref, (ref_part or ref_path.name).strip("/"))
    found = dict(kind="field", shape=list(ref.shape), dims=list(ref.dims), x_name=None, uncovered=None,
                 note=layout_note(ref, cand),
                 points_outside_range=0, columns=[result], ratio=result["ratio"], passed=bool(result["passed"]))
    if "distinct" in result:  # the copy finding reads it from the entry (copies.py)
        found["distinct"] = result.pop("distinct")
    return found


TIME_AXES = {"t", "time", "times", "step", "steps", "frame", "frames", "nt", "record", "iteration"}


def _along(cand: Field, ref: Field, cfg: CompareConfig, label: str) -> str:
    """Where the shapes differ along one axis only: which axis, how many frames (or points) each side has, and
    whether what was written matches the reference's first ones (a run cut short, not a wrong one)."""
    if len(cand.shape) != len(ref.shape):
        return ""
    axes = [i for i, (a, b) in enumerate(zip(cand.shape, ref.shape)) if a != b]
    if len(axes) != 1:
        return ""
    axis = axes[0]
    n, m = cand.shape[axis], ref.shape[axis]
    name = ref.dims[axis] if axis < len(ref.dims) and ref.dims[axis] else f"axis {axis}"
    unit = "frames" if str(name).lower() in TIME_AXES else "points"
    if n > m:
        return f"; along {name}: {n} {unit} written, the reference has {m}"
    said = f"; along {name}: {n} of {m} {unit} written"
    if n == 0 or cand.size * 8 > 1 << 30:  # nothing to compare, or too large to read at once on an error path
        return said
    part = tuple(slice(0, n) if i == axis else slice(None) for i in range(len(ref.shape)))
    try:
        c = np.asarray(cand.source[...], dtype=np.float64).reshape(-1)
        r = np.asarray(ref.source[part], dtype=np.float64).reshape(-1)
    except Exception:  # noqa: BLE001 - the shape finding stands on its own; this is only its detail
        return said
    rtol, atol, scale = _tolerances(cfg, label, label)
    with np.errstate(all="ignore"):
        diff = np.abs(c - r)
        if not diff.any() and np.array_equal(np.isnan(c), np.isnan(r)):
            return said + f"; the {n} written match bit for bit"
        fixed = _scale_of(cfg, scale, ref)
        ratio = point_ratios(diff, np.abs(r) if fixed is None else np.full(len(r), fixed), rtol, atol, cfg.tolerance)
    worst = float(np.nanmax(ratio)) if ratio.size else 0.0
    if np.isfinite(worst) and worst <= 1:
        return said + f"; the {n} written match within the tolerance"
    return said + f"; the {n} written differ from the reference's first {n} ({worst:.3g}x the tolerance)"


def storage_words(cand: Field, rtol: float, atol: float) -> str | None:
    """A candidate stored in a floating type too coarse for the tolerance (float32 against rtol 1e-10): no value it
    can hold meets it, whatever the solver computes."""
    if cand.dtype.kind != "f" or cand.dtype.itemsize >= 8 or rtol <= 0:
        return None
    eps = float(np.finfo(cand.dtype).eps)
    if rtol >= eps:
        return None
    return (f"the candidate stores {cand.dtype} values (relative spacing {eps:.2g}), which cannot meet rtol {rtol:g}: "
            "write it as float64")


def stated_lengths(cand: Field, ref: Field) -> str:
    """" (the candidate states data_length = 9 of its 16 rows; ...)" where a side states one: why the shapes
    differ when the arrays written are alike."""
    said = "; ".join(f"the {side} states data_length = {found.shape[0]} of its {found.written} rows"
                     for side, found in (("candidate", cand), ("reference", ref)) if found.written is not None)
    return f" ({said})" if said else ""


def layout_note(ref: Field, cand: Field) -> str | None:
    """What either file states that was not used (a coordinate of the wrong length), and rows beyond a stated
    length: said beside the comparison, so nothing the file says is silently dropped."""
    said = ref.notes + [f"the candidate: {note}" for note in cand.notes if note not in ref.notes]
    return "; ".join(said) or None


def _index(found: Field, flat: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, found.shape))


def _at(found: Field, flat: int) -> str:
    return location(found.dims, found.coords, _index(found, flat))


def _coords(found: Field, flat: int) -> dict[str, float]:
    return {d: float(c[i]) for d, c, i in zip(found.dims, found.coords, _index(found, flat)) if c is not None}


def _quoted(cand: Field, ref: Field, worst: int, first_bad: int | None, nonfinite: int) -> dict:
    """The values a failing line quotes: at the worst element, and at the first NaN or inf of the candidate where
    the reference is finite (``nonfinite``: how many such)."""
    found = values_at(cand.source, ref.source, _index(ref, worst))
    if first_bad is not None:
        found.update(first_nonfinite(cand.source, ref.source, _index(ref, first_bad), nonfinite),
                     row_first_nonfinite=first_bad, x_first_nonfinite=float(first_bad),
                     where_first_nonfinite=_at(ref, first_bad))
    return found
