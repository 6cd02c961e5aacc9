"""The pointwise rule of a comparison: the tolerance at each point, the error over it (the ratio, <= 1 passes), the
values at the worst point and at the first non-finite one (what a failing line quotes), and the median and p95.

Shared by the table comparer (compare.py), the field comparer (field_compare.py) and the calibration gate, so a
point that passes in one passes in all.
"""
from __future__ import annotations

import math

import numpy as np


def point_tolerance(scale: np.ndarray, rtol: float, atol: float, mode: str) -> np.ndarray:
    """The allowed difference at each point, the rule point_ratios applies (kept beside it so the two agree):
    "sum" atol + rtol*|s|; "either" the larger; "both" the smaller, and with atol = 0 nothing at all."""
    rel = rtol * np.abs(scale)
    if mode == "either":
        return np.maximum(atol, rel)
    if mode == "both":
        return np.minimum(atol, rel)
    return atol + rel


def point_ratios(diff: np.ndarray, scale: np.ndarray, rtol: float, atol: float, mode: str) -> np.ndarray:
    """Error over tolerance at each point (<= 1 passes); NaN anywhere becomes inf."""
    if mode == "sum":
        tol = scale * rtol
        tol += atol
        if atol > 0:  # the tolerance is at least atol everywhere: no 0/0 to look for (the derived atol's case)
            with np.errstate(all="ignore"):
                ratio = np.divide(diff, tol, out=tol)
        else:
            ratio = _over(diff, tol, into_den=True)
    else:
        ratio = _over(diff, scale * rtol, into_den=True)
        if atol:
            (np.minimum if mode == "either" else np.maximum)(ratio, diff / atol, out=ratio)
        elif mode == "both":  # a zero absolute tolerance: any difference at all fails
            ratio[diff > 0] = np.inf
        # "either" with atol = 0: d <= 0 only where d == 0, where the relative ratio is already 0
    _nan_to_inf(ratio)
    return ratio


def _over(num: np.ndarray, den: np.ndarray, into_den: bool = False) -> np.ndarray:
    """num / den with 0/0 = 0 and x/0 = inf for x > 0 (an exact match passes a zero tolerance).
    With ``into_den`` the result overwrites ``den`` (a temporary), saving a column-sized copy."""
    zero = den == 0
    with np.errstate(all="ignore"):
        out = np.divide(num, den, out=den if into_den else None)
    if zero.any():
        out[zero] = np.where(num[zero] > 0, np.inf, np.where(num[zero] == 0, 0.0, np.nan))
    return out


def _nan_to_inf(values: np.ndarray) -> None:
    """In place; the cheap sum finds out first whether there is any NaN to replace (usually none)."""
    with np.errstate(all="ignore"):
        if not np.isnan(values.sum()):
            return
    values[np.isnan(values)] = np.inf


def _nonfinite(values: np.ndarray) -> int:
    with np.errstate(all="ignore"):
        if np.isfinite(values.sum()):
            return 0
    return int((~np.isfinite(values)).sum())


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    """Median and 95th percentile (numpy's linear definition, to the bit), in one partition pass that reorders
    ``values``; inf where numpy says NaN (a NaN among them, or none at all). Not np.percentile itself: it calls
    np.unique, whose first use imports numpy.ma, 7 ms of a `nightshift compare` process."""
    flat = values.reshape(-1)
    n = len(flat)
    if n == 0:
        return math.inf, math.inf
    at = (n - 1) * np.array([0.5, 0.95])  # numpy's virtual indexes for "linear"
    low = np.floor(at)
    gamma = at - low
    low = low.astype(np.intp)
    high = np.minimum(low + 1, n - 1)
    flat.partition(sorted({n - 1, *low.tolist(), *high.tolist()}))  # n - 1: a NaN sorts last
    if np.isnan(flat[-1]):  # numpy's answer is NaN then
        return math.inf, math.inf
    a, b = flat[low], flat[high]
    with np.errstate(all="ignore"):
        diff = b - a
        found = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)  # numpy's _lerp
    return tuple(math.inf if math.isnan(v) else float(v) for v in found)


def _value(value) -> float:
    return float(value)  # NaN and inf stay what they are: strict_json writes them as strings


def values_at(cand, ref, index) -> dict:
    """What a failing line quotes of the worst point beside its relative error: the candidate's and the reference's
    values there and |cand - ref| (``cand`` and ``ref`` index like arrays: numpy, h5py, netCDF4)."""
    c, r = _value(cand[index]), _value(ref[index])
    with np.errstate(all="ignore"):
        gap = abs(c - r)
    return {"cand_worst": c, "ref_worst": r, "abs_worst": gap if math.isfinite(gap) else math.inf,
            "ref_zero_worst": r == 0.0}


def first_nonfinite(cand, ref, index, count: int) -> dict:
    """The first point where the candidate is NaN or inf (``index``; None: nowhere) and ``count``, how many there
    are: a failing line names it as what it is, beside the reference's value there, never as an infinite error."""
    if index is None:
        return {}
    return {"nonfinite_where_finite": count, "cand_first_nonfinite": _value(cand[index]),
            "ref_first_nonfinite": _value(ref[index])}
