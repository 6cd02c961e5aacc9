"""The calibration gate over the reference's dynamic range: can a comparison fail in every decade of |reference|?

A relative tolerance holds relatively only where rtol x |reference| is not drowned by atol. Each compared column or
field is moved by ``SWEEP`` times its relative tolerance at every point at once (|d| = SWEEP x rtol x |scale|) under the
oracle's own pointwise rule (pointwise.py, what compare.py and field_compare.py apply), solved for |scale| so the column
is passed over once, and the points found measured with point_ratios itself: a point where that passes cannot fail at
the goal's relative precision, because atol dominates there (atol >= (SWEEP - 1) x rtol x |scale|). Those points are one
region, said in one line: the decades of |reference| and the stretch of x it covers, its share of the points and the
effective tolerance there. Values zero at the data's own precision (within ``ROUNDOFF`` of the largest, as init's
derived floor covers) are where an absolute tolerance belongs; an atol no larger than the data's own round-off floor
(roundoff.py: what init derives) is named, never refused; a stated atol above it that leaves more than ``SHARE`` of the
points that are clearly non-zero compared absolutely is refused, naming the share and the fix. A reference that is
itself NaN or inf somewhere is refused too: no candidate matches it there.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from nightshift.supervisor.verify.oracle.pointwise import point_ratios
from nightshift.supervisor.verify.oracle.roundoff import Floor

SWEEP = 3.0  # "a few times the tolerance"
SHARE = 0.1  # more than this share of clearly non-zero points compared absolutely: the atol hides the goal
OWN_FLOOR = 1.01  # init writes its floor to three digits (a held-out one rounded down): no larger is the data's own
STRETCHES = 3  # stretches of x a region line names before counting the rest
ROUNDOFF = 4096 * float(np.finfo(np.float64).eps)  # zero at float64's precision beside the largest value (init's rule)


def nonfinite_reference(subject: str, values: np.ndarray, unit: str, where) -> str | None:
    """The line for a reference that is NaN or inf somewhere (``where(i)`` names point i), or None."""
    with np.errstate(all="ignore"):
        if np.isfinite(values.sum()):
            return None
    bad = np.flatnonzero(~np.isfinite(values))
    kind = "NaN" if np.isnan(values[bad[0]]) else "inf"
    return (f"{subject}: the reference is itself {kind} at {where(int(bad[0]))} ({len(bad)} of {values.size} "
            f"{unit}s not finite): no candidate can match there; fix the reference, or leave those {unit}s out "
            "(range)")


def decade_lines(subject: str, ref: np.ndarray, scale: np.ndarray, rtol: float, atol: float, mode: str,
                 x: np.ndarray | None = None, x_name: str | None = None, unit: str = "point",
                 floor: Callable[[], Floor] | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes): where a perturbation of SWEEP x the relative tolerance cannot fail, in one line each.
    ``floor``: measures the data's own round-off floor (roundoff.py, init's rule), only where some region cannot
    fail; an atol no larger is the data's precision, never refused, only named."""
    if not rtol or not atol:  # no atol: relative everywhere; no rtol: the goal is absolute, and says so itself
        return [], []
    bound = _bound(rtol, atol, mode)
    if bound is None:
        return [], []
    size = np.abs(np.asarray(scale, dtype=np.float64))
    cannot = size <= bound  # one pass: where the sweep cannot fail, by the pointwise rule solved for |scale|
    if not cannot.any():
        return [], []
    cannot &= np.isfinite(ref) & (size > 0)
    at = np.flatnonzero(cannot)  # the region, measured with the oracle's own rule to be sure it cannot fail
    held = point_ratios(SWEEP * rtol * size[at], size[at], rtol, atol, mode) <= 1
    cannot[at[~held]] = False
    if not cannot.any():
        return [], []
    magnitude = np.abs(ref)
    largest = float(magnitude[np.isfinite(magnitude)].max())
    clear = np.isfinite(ref) & (magnitude > ROUNDOFF * largest)  # clearly non-zero at the data's precision
    hidden = cannot & clear
    counted = int(np.isfinite(ref).sum())
    region = _region(ref, cannot, x, x_name, unit)
    effective = float(np.max((atol + rtol * size[cannot]) / np.where(magnitude[cannot] > 0, magnitude[cannot],
                                                                        np.inf)))
    tolerance = f"the tolerance there is atol {atol:g}" + (
        f", up to {_percent(effective)} of |reference|" if math.isfinite(effective) and effective > 0 else "")
    share = int(cannot.sum()) / max(counted, 1)
    head = (f"{subject}: {region}: {int(cannot.sum())} of {counted} {unit}s ({_percent(share)}) cannot fail at "
            f"{SWEEP:g}x rtol ({rtol:g}): atol dominates there; {tolerance}")
    if not hidden.any():
        return [], [f"{head} (zero at the data's precision: what an absolute tolerance is for)"]
    hidden_share = int(hidden.sum()) / max(int(clear.sum()), 1)
    own = floor() if floor is not None else None
    if own is not None and atol <= OWN_FLOOR * max(own.atol, own.roundoff):
        return [], [f"{head} (atol is the data's own round-off floor: a value under {atol / (SWEEP - 1) / rtol:.2g} "
                    "is compared relatively only as far as the round-off of its neighbours allows)"]
    if hidden_share > SHARE:
        cap = float(np.quantile(magnitude[clear], SHARE)) * rtol * (SWEEP - 1)
        return [f"{head}; {_percent(hidden_share)} of its clearly non-zero {unit}s are compared absolutely (more "
                f"than {_percent(SHARE)}): the goal's rtol does not hold there; lower atol below {cap:.2g}, or set "
                "rtol = 0 if an absolute tolerance is what the goal means"], []
    return [], [head]


def _bound(rtol: float, atol: float, mode: str) -> float | None:
    """The largest |scale| where SWEEP x rtol x |scale| is within pointwise.point_tolerance: "sum" atol + rtol s
    holds it while (SWEEP - 1) rtol s <= atol; "either" max(atol, rtol s) while SWEEP rtol s <= atol; "both" never
    (min(atol, rtol s) < SWEEP rtol s for every s > 0). None: nowhere."""
    if mode == "both":
        return None
    return atol / ((SWEEP - 1) * rtol) if mode == "sum" else atol / (SWEEP * rtol)


def _percent(share: float) -> str:
    value = 100 * share
    return f"{value:.3g}%" if value < 1e4 else f"{value:.2e}%"


def _region(ref: np.ndarray, mask: np.ndarray, x: np.ndarray | None, x_name: str | None, unit: str) -> str:
    """'|reference| from 1e-01 to 1e+01 (k from 1.02 to 6)': the decades of the points and where they lie."""
    magnitude = np.abs(ref[mask])
    positive = magnitude[magnitude > 0]
    if positive.size:
        lo, hi = math.floor(math.log10(positive.min())), math.floor(math.log10(positive.max())) + 1
        words = f"|reference| from 1e{lo:+03d} to 1e{hi:+03d}"
    else:
        words = "|reference| = 0"
    rows = np.flatnonzero(mask)
    breaks = np.flatnonzero(np.diff(rows) > 1)
    starts, ends = rows[np.r_[0, breaks + 1]], rows[np.r_[breaks, len(rows) - 1]]
    if x is not None and x.size == ref.size:
        name = x_name or "x"
        spans = list(dict.fromkeys(f"{float(x[a]):.6g} to {float(x[b]):.6g}" if x[a] != x[b] else f"{float(x[a]):.6g}"
                                   for a, b in zip(starts, ends)))
    else:
        name = f"{unit}s"
        spans = [f"{int(a)} to {int(b)}" if a != b else f"{int(a)}" for a, b in zip(starts, ends)]
    more = f" and {len(spans) - STRETCHES} more stretches" if len(spans) > STRETCHES else ""
    return f"{words} ({name} {', '.join(spans[:STRETCHES])}{more})"
