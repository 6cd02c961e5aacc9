"""Which values of a reference are zero at the data's own precision, and the absolute floor `nightshift init` derives
from them when the goal states no absolute tolerance.

A relative tolerance means what it says wherever the reference is clearly non-zero, over any dynamic range: a P(k)
from 2e4 down to 0.86, a C_l's low-l tail, a density profile over ten decades are compared relatively at every
point. What a relative tolerance cannot compare is a value that is round-off: a field zero by symmetry (sin(pi) =
1.2e-16 against neighbours of 0.4; the same scheme on another backend gives 6e-17 there, "1.0 relative"), the sample
that lands on a sign change. Round-off is relative to the magnitudes the value was computed from, not to the value,
so a value is taken as zero at its precision when

    |v| <= ZERO_ULPS x eps x s,   s = the largest |v| of the point and its neighbours along each axis

(eps: the machine epsilon of the reference's own dtype, float64 for a text table; ZERO_ULPS = 4096: the round-off a
computation leaves after thousands of operations, or an argument of size ~10^3, as sin(35 pi) = 4e-15 does beside
0.2, while a smooth curve sampled near its zero is rarely 10^-12 of its neighbours). A smooth spectrum or power law
has neighbours of its own size, so none of its values is round-off however many decades it spans; a row zero by
symmetry sits between rows of the field's size. The floor is then

    atol = max(FLOOR_SPREAD x the largest |v| among them, FLOOR_ULPS x eps x the largest s among them)

the spread of the round-off the data shows (a candidate computed another way has round-off of its own, of that
size) and, where the reference is exactly 0 there, 64 ulps of what is beside it; a value above it is compared
relatively.

What the data cannot settle, init settles strictly and says how to loosen: values below the round-off of the
largest value that are not zero by their neighbours (an FFT's noise floor looks like that; so does a real tail) are
compared relatively, and a column that changes sign is compared relatively up to its zeros (the local amplitude
would be a scale expression). A sample of a big data set may miss a row zero by symmetry: there the floor is the
round-off of the largest value measured (FLOOR_ULPS x eps x max|v|), and the comment says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

ZERO_ULPS = 4096  # |v| <= this many ulps of the largest value beside it: zero at the data's precision
FLOOR_ULPS = 64  # the floor where the reference is exactly 0 beside values of size s: 64 ulps of s
FLOOR_SPREAD = 4  # the floor over the round-off the reference shows: a candidate's may be a few times larger


@dataclass
class Floor:
    atol: float  # the derived absolute floor; 0 when no value is zero at its precision
    largest: float  # max |v| of the finite values measured (0: all zero)
    smallest: float  # min |v| > 0 (inf: none)
    eps: float  # the precision of the reference's dtype
    values: int  # finite values measured
    total: int | None  # values in the data set (None: unknown, a sampled text table)
    zeros: int  # values zero at their precision (exact zeros among them)
    tiny: int  # values below the largest's round-off that are not zero by their neighbours: compared relatively
    crossings: int  # sign changes along a table column (0 for a field)
    fallback: bool = False  # sampled and no zero found: the floor is the round-off of the largest value
    spread: float = 0.0  # the largest |v| of the values zero at their precision: the round-off the data shows
    beside: float = 0.0  # the largest |v| beside them

    @property
    def sampled(self) -> bool:
        return self.total is None or self.values < self.total

    @property
    def zero(self) -> bool:
        return self.largest == 0

    @property
    def roundoff(self) -> float:
        """The round-off of the largest value: the floor that would also cover a noise floor of that size."""
        return FLOOR_ULPS * self.eps * self.largest

    @property
    def decades(self) -> float:
        if not np.isfinite(self.smallest) or self.largest == 0:
            return 0.0
        return float(np.log10(self.largest / self.smallest))


def precision(dtype) -> float:
    """The machine epsilon of a reference's dtype (float64's for integers and text)."""
    try:
        kind = np.dtype(dtype)
    except TypeError:
        kind = np.dtype(np.float64)
    return float(np.finfo(kind).eps) if kind.kind in "fc" else float(np.finfo(np.float64).eps)


def local_scale(size: np.ndarray) -> np.ndarray:
    """The largest of each point's |v| and its neighbours' along every axis (not diagonals)."""
    out = size.copy()
    for axis in range(size.ndim):
        if size.shape[axis] < 2:
            continue
        head = [slice(None)] * size.ndim
        tail = [slice(None)] * size.ndim
        head[axis], tail[axis] = slice(1, None), slice(None, -1)
        np.maximum(out[tuple(head)], size[tuple(tail)], out=out[tuple(head)])
        np.maximum(out[tuple(tail)], size[tuple(head)], out=out[tuple(tail)])
    return out


def measure(blocks: Iterable[np.ndarray], eps: float, total: int | None, sampled: bool = False,
            column: bool = False) -> Floor:
    """The floor over ``blocks`` (each a slab in which neighbours are neighbours in the data set); ``column``: one
    column of a table, where sign changes are counted."""
    largest, smallest, count, zeros, crossings = 0.0, np.inf, 0, 0, 0
    zero_scale = zero_spread = 0.0
    kept = []
    for block in blocks:
        values = np.asarray(block, dtype=np.float64)
        finite = np.isfinite(values)
        size = np.where(finite, np.abs(values), 0.0)
        count += int(finite.sum())
        if not size.size:
            continue
        largest = max(largest, float(size.max()))
        positive = size[size > 0]
        if positive.size:
            smallest = min(smallest, float(positive.min()))
        around = local_scale(size)
        at_roundoff = finite & (size <= ZERO_ULPS * eps * around)
        zeros += int(at_roundoff.sum())
        if at_roundoff.any():
            zero_scale = max(zero_scale, float(around[at_roundoff].max()))
            zero_spread = max(zero_spread, float(size[at_roundoff].max()))
        kept.append((size, at_roundoff))
        if column:
            # a sign change between two neighbours that are both clearly non-zero (one through a value that is
            # round-off is the floor's); NaN rows count as breaks
            signs = np.where(finite & ~at_roundoff, np.sign(values), 0.0).reshape(-1)
            crossings += int((signs[1:] * signs[:-1] < 0).sum())
    noise = FLOOR_ULPS * eps * largest
    tiny = sum(int(((size > 0) & (size <= noise) & ~mask).sum()) for size, mask in kept)
    atol = max(FLOOR_SPREAD * zero_spread, FLOOR_ULPS * eps * zero_scale)
    fallback = sampled and atol == 0 and largest > 0
    if fallback:
        atol = FLOOR_ULPS * eps * largest
    return Floor(atol, largest, smallest, eps, count, total, zeros, tiny, crossings, fallback, zero_spread, zero_scale)
