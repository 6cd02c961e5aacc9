"""Is an exact match evidence of a copy? Only when the matching values carry information.

An honest solver hits a reference exactly where the answer is trivial: a field that is zero everywhere (the
y-momentum of a 1-D problem), a constant, small integers (counts, flags, indices), the coordinate axis it was
given. None of those is a copy finding. A copy finding needs at least ``COPY_MIN_DISTINCT`` distinct non-trivial
values (finite, not zero, not an integer of magnitude up to ``SMALL_INTEGER``) matching to the last digit, in the
compared columns that are not an evenly spaced axis.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

COPY_MIN_DISTINCT = 16
SMALL_INTEGER = 1_000_000


def informative(values: np.ndarray) -> np.ndarray:
    """The values of ``values`` that carry information: finite, non-zero and not a small integer."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        trivial = ~np.isfinite(values) | (values == 0) | ((values == np.round(values)) & (np.abs(values) <= SMALL_INTEGER))
    return values[~trivial]


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique for NaN-free float arrays, without it: numpy 2's np.unique imports numpy.ma on first use, which
    alone was a third of the scans' time in a `nightshift compare` process (7 ms)."""
    ordered = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def distinct_count(blocks: Iterable[np.ndarray], enough: int = COPY_MIN_DISTINCT) -> int:
    """Distinct informative values in ``blocks``, counted up to ``enough`` (it stops reading there)."""
    seen = np.empty(0)
    for block in blocks:
        values = informative(block)
        if not len(values):
            continue
        seen = sorted_unique(np.concatenate((seen, values[: 1 << 20])))
        if len(seen) >= enough:
            return enough
    return int(len(seen))


def is_axis(column: np.ndarray) -> bool:
    """An evenly spaced, monotonic column: a grid the solver is given (its x, its time steps), not a result."""
    column = np.asarray(column, dtype=np.float64)
    if len(column) < 3 or not np.all(np.isfinite(column)):
        return False
    step = np.diff(column)
    return bool(step[0] != 0 and np.allclose(step, step[0], rtol=1e-9, atol=0))


def table_distinct(columns: Iterable[np.ndarray], enough: int = COPY_MIN_DISTINCT) -> int:
    """The evidence of an exact match over table columns: distinct informative values, axes left out."""
    return distinct_count((c for c in columns if not is_axis(c)), enough)

