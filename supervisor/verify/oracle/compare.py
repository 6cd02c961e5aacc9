"""One comparison: align the candidate with the reference (same grid, or interpolated at the reference's x
inside the overlap), then measure every column against its tolerance.

A point passes when its error is within tolerance (see ``config.ToleranceMode``); its *ratio* is the error
divided by the tolerance, so ratio <= 1 passes. NaN or Inf in the candidate are failing points (ratio inf).
Reference points outside the candidate's x range (inside the configured range) are uncovered: reported with
their count and x span, and they fail the comparison rather than being dropped.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from nightshift.supervisor.verify.oracle.evidence import table_distinct
from nightshift.supervisor.verify.oracle.pointwise import (_nan_to_inf, _nonfinite, _over, _percentiles, first_nonfinite,
                                                point_ratios, values_at)
from nightshift.supervisor.verify.oracle.scale import scale_values
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import CompareConfig

PARALLEL_ROWS = 200_000  # below this, threads cost more than they save
SEQUENTIAL_ROWS = 500_000  # from here one column at a time: memory, not speed, is what a bigger table runs out of
BLOCK_ROWS = 1 << 17  # rows measured at a time (1 MB per temporary)


def compare_tables(cfg: CompareConfig, cand: Table, ref: Table) -> dict:
    xr, xc = _x(cfg, ref, "reference"), _x(cfg, cand, "candidate")
    keys = _column_keys(cfg, ref)
    compared = {str(k) for k in keys} | {ref.name_of(ref.index_of(k, "reference")) for k in keys}
    stray = sorted(k for k in cfg.per_column if k not in compared)
    if stray:
        raise OracleInputError(f"per_column names {stray}, which are not compared (compared: "
                               f"{', '.join(str(k) for k in keys)}); fix the column name", "reference",
                               "unknown column")
    ref_idx = [ref.index_of(k, "reference") for k in keys]
    cand_idx = [cand.index_of(k, "candidate") for k in keys]
    keep = np.ones(len(xr), dtype=bool)
    if cfg.range is not None:
        keep = (xr >= cfg.range[0]) & (xr <= cfg.range[1])
    result: dict = {"points_outside_range": int((~keep).sum()), "uncovered": None, "note": None,
                    "x_name": _x_name(cfg, ref)}
    if cfg.interpolate == "none":
        cand_rows = _same_grid(cfg, xc, xr, keep, result["x_name"])
        at = slice(None) if cfg.range is None else np.flatnonzero(keep)  # no range: every row on both sides
        if not isinstance(at, slice) and len(at) == len(xr) and len(cand_rows) == len(xc):
            at = cand_rows = slice(None)  # views, not copies of big tables
        values = [cand.columns[i][cand_rows] for i in cand_idx]
    else:
        at, values, result["uncovered"], result["note"] = _interpolated(cfg, cand, cand_idx, xc, xr, keep,
                                                                        result["x_name"])
    x_at = xr[at]
    if len(x_at) == 0:
        where = f" inside the range {list(cfg.range)}" if cfg.range else ""
        raise OracleInputError(f"no reference points to compare{where}", "reference", "empty range")
    lookup = _reference_lookup(ref, at)
    rows = None if isinstance(at, slice) else at  # the reference's row of each compared point
    jobs = [(cfg, ref.name_of(ri), keys[n], np.asarray(values[n], dtype=float),
             np.asarray(ref.columns[ri][at], dtype=float), x_at, lookup, rows) for n, ri in enumerate(ref_idx)]
    if len(jobs) > 1 and PARALLEL_ROWS <= len(x_at) < SEQUENTIAL_ROWS:
        # numpy releases the GIL in its loops and in partition: big columns are measured side by side
        with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
            columns = list(pool.map(lambda job: _measure(*job), jobs))
    else:
        columns = [_measure(*job) for job in jobs]
    for column, ri in zip(columns, ref_idx):
        column["index"] = ri  # the reference's column: a repeated header name is not enough to find it again
    ratio = max((c["ratio"] for c in columns), default=math.inf)
    if result["uncovered"]:
        ratio = math.inf
    if ratio == 0:  # an exact match: is it a copy, or values without information (evidence.py)?
        result["distinct"] = table_distinct(np.asarray(ref.columns[ri])[at] for ri in ref_idx)
    result.update(columns=columns, ratio=ratio,
                  passed=bool(ratio <= 1 and all(c["passed"] for c in columns) and not result["uncovered"]))
    return result


def _x_name(cfg: CompareConfig, ref: Table) -> str | None:
    """The x column's name in the reference's header: what a user reads ("at z=2.5"); None without one."""
    return ref.names[ref.index_of(cfg.x, "reference")] if cfg.x is not None else None


def _x(cfg: CompareConfig, table: Table, side: str) -> np.ndarray:
    if cfg.x is None:
        return np.arange(table.rows, dtype=float)
    return table.column(cfg.x, side)


def _column_keys(cfg: CompareConfig, ref: Table) -> list[str | int]:
    if cfg.columns:
        return list(cfg.columns)
    skip = ref.index_of(cfg.x, "reference") if cfg.x is not None else -1
    return [ref.names[i] if ref.names[i] is not None else i for i in range(len(ref.columns)) if i != skip]


def _x_words(cfg: CompareConfig, name: str | None) -> str:
    return name if name is not None else f"x (column {cfg.x})"


def _same_grid(cfg: CompareConfig, xc: np.ndarray, xr: np.ndarray, keep: np.ndarray,
               x_name: str | None = None) -> np.ndarray | slice:
    """Candidate row numbers matching the reference rows kept (``slice(None)``: all of them); the grids must
    agree (else: interpolate)."""
    rows = np.flatnonzero((xc >= cfg.range[0]) & (xc <= cfg.range[1])) if cfg.range is not None \
        else slice(None)
    count = len(xc) if isinstance(rows, slice) else len(rows)
    if count != int(keep.sum()):
        fix = "make the grids match or set interpolate = 'linear'" if cfg.x is not None else \
            "write the reference's rows, in its order (no x column is named, so nothing can be interpolated)"
        raise OracleInputError(f"the candidate has {count} rows to compare and the reference {int(keep.sum())}"
                               f"; {fix}", "both", "grids differ")
    if cfg.x is not None:
        a = xc[rows]
        b = xr if count == len(xr) else xr[keep]
        for lo in range(0, count, BLOCK_ROWS):  # blocks: a million-row grid's temporaries stay small
            pa, pb = a[lo:lo + BLOCK_ROWS], b[lo:lo + BLOCK_ROWS]
            with np.errstate(invalid="ignore"):
                off = ~(np.abs(pa - pb) <= 1e-9 * np.maximum(np.abs(pa), np.abs(pb)) + 1e-300)
            if off.any():
                i = lo + int(np.flatnonzero(off)[0])
                raise OracleInputError(f"the x grids differ first at row {i} (candidate {_x_words(cfg, x_name)} "
                                       f"= {a[i]:.10g}, reference {b[i]:.10g}); set interpolate = 'linear' or "
                                       "'loglog'", "both", "grids differ")
    return rows


def _interpolated(cfg: CompareConfig, cand: Table, cand_idx: list[int], xc: np.ndarray, xr: np.ndarray,
                  keep: np.ndarray, x_name: str | None = None):
    ok = np.isfinite(xc)
    order = np.argsort(xc[ok], kind="stable")
    xs = xc[ok][order]
    if len(xs) < 2:
        raise OracleInputError("the candidate has fewer than 2 finite x values to interpolate", "candidate",
                               "too few points")
    inside = keep & (xr >= xs[0]) & (xr <= xs[-1])
    outside = keep & ~inside
    if not inside.any():
        raise OracleInputError(f"the x ranges do not overlap: candidate {_x_words(cfg, x_name)} in "
                               f"[{xs[0]:.6g}, {xs[-1]:.6g}], "
                               f"reference in [{np.nanmin(xr):.6g}, {np.nanmax(xr):.6g}]", "both", "no overlap")
    uncovered = None
    if outside.any():
        out_rows = np.flatnonzero(outside)
        low, high = out_rows[np.argmin(xr[out_rows])], out_rows[np.argmax(xr[out_rows])]
        uncovered = {"count": int(outside.sum()), "x_min": float(xr[low]), "x_max": float(xr[high]),
                     "row_min": int(low), "row_max": int(high), "candidate_x": [float(xs[0]), float(xs[-1])]}
    at = np.flatnonzero(inside)
    xq = xr[at]
    notes = []
    if cfg.interpolate == "loglog":
        if xs[0] <= 0 or xq.min() <= 0:
            raise OracleInputError("interpolate = 'loglog' needs x > 0; use 'linear'", "both", "bad interpolation")
        values = []
        for i in cand_idx:
            y = np.asarray(cand.columns[i], dtype=float)[ok][order]
            values.append(_loglog(xs, y, xq, notes, cand.name_of(i)))
    else:
        values = [np.interp(xq, xs, np.asarray(cand.columns[i], dtype=float)[ok][order]) for i in cand_idx]
    return at, values, uncovered, "; ".join(notes) or None


def _loglog(xs: np.ndarray, y: np.ndarray, xq: np.ndarray, notes: list[str], name: str) -> np.ndarray:
    lx, lq = np.log(xs), np.log(xq)
    with np.errstate(all="ignore"):
        if np.all(y > 0):
            return np.exp(np.interp(lq, lx, np.log(y)))
        if np.all(y < 0):
            return -np.exp(np.interp(lq, lx, np.log(-y)))
    notes.append(f"{name} is not of one sign: interpolated linearly in log x")
    return np.interp(lq, lx, y)


def _reference_lookup(ref: Table, at: np.ndarray):
    return lambda key: np.asarray(ref.column(key, "reference")[at], dtype=float)


def _tolerances(cfg: CompareConfig, key: str | int, name: str) -> tuple[float, float, float | str]:
    over = cfg.per_column.get(str(key)) or cfg.per_column.get(name)
    rtol = over.rtol if over and over.rtol is not None else cfg.rtol
    atol = over.atol if over and over.atol is not None else cfg.atol
    scale = over.scale if over and over.scale is not None else cfg.scale
    return rtol, atol, scale


def _measure(cfg: CompareConfig, name: str, key: str | int, cand: np.ndarray, ref: np.ndarray, x: np.ndarray,
             lookup, rows: np.ndarray | None = None) -> dict:
    row = (lambda i: int(rows[i])) if rows is not None else int
    rtol, atol, scale = _tolerances(cfg, key, name)
    rel = scale_values(scale, ref, lookup)  # a fresh array: the relative error is written over it, block by block
    worst = i_abs = failing = 0
    ratio_at = abs_at = -math.inf
    # Blocks of rows: the temporaries of a million-row column are a block's size, not the column's (with two
    # columns measured side by side they were most of the comparison's peak memory).
    for lo in range(0, len(ref), BLOCK_ROWS):
        hi = min(lo + BLOCK_ROWS, len(ref))
        with np.errstate(all="ignore"):
            diff = np.subtract(cand[lo:hi], ref[lo:hi])
            np.abs(diff, out=diff)
        _nan_to_inf(diff)
        ratio = point_ratios(diff, rel[lo:hi], rtol, atol, cfg.tolerance)
        at, at_abs = int(np.argmax(ratio)), int(np.argmax(diff))
        if ratio[at] > ratio_at:  # strictly: the first point of the worst value, as one argmax over the column
            worst, ratio_at = lo + at, float(ratio[at])
        if diff[at_abs] > abs_at:
            i_abs, abs_at = lo + at_abs, float(diff[at_abs])
        failing += int((ratio > 1).sum())
        del ratio
        block = _over(diff, rel[lo:hi], into_den=True)  # rel[lo:hi] is a view: written in place
        _nan_to_inf(block)
    found = {"column": name, "rtol": rtol, "atol": atol, "scale": scale, "tolerance": cfg.tolerance,
             "points": int(len(ref)), "failing": failing, "nonfinite": _nonfinite(cand),
             "max_abs": abs_at, "x_max_abs": float(x[i_abs]), "row_max_abs": row(i_abs),
             "ratio": ratio_at, "x_worst": float(x[worst]), "row_worst": row(worst),
             "passed": failing == 0}
    found.update(values_at(cand, ref, worst))
    if found["nonfinite"]:  # NaN or inf is named as what it is, where it first appears (not folded into "inf")
        bad = np.flatnonzero(~np.isfinite(cand) & np.isfinite(ref))
        if len(bad):
            found.update(first_nonfinite(cand, ref, int(bad[0]), len(bad)), x_first_nonfinite=float(x[bad[0]]),
                         row_first_nonfinite=row(bad[0]))
    i_rel = int(np.argmax(rel))
    found.update(max_rel=float(rel[i_rel]), x_max_rel=float(x[i_rel]), row_max_rel=row(i_rel),
                 rel_worst=float(rel[worst]))
    found["median_rel"], found["p95_rel"] = _percentiles(rel)  # last use of rel: partitioned in place
    return found
