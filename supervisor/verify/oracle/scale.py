"""What a relative error is relative to: the reference itself, the column's largest magnitude, a number, or an
expression of reference columns (``sqrt(TT*EE)`` for a TE spectrum that crosses zero).

Expressions are parsed with ``ast`` and evaluated over numpy arrays; only arithmetic, numbers, column names,
``col("name with spaces")``/``col(3)`` and the functions below are allowed, so a config can never run code.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from nightshift.supervisor.config import scale as scale_grammar
from nightshift.supervisor.verify.oracle.table import OracleInputError

FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "sqrt": np.sqrt, "abs": np.abs, "exp": np.exp, "log": np.log, "log10": np.log10,
    "max": np.maximum, "min": np.minimum,
}
assert set(FUNCTIONS) == set(scale_grammar.FUNCTION_NAMES), "the grammar and the evaluator name the same functions"


def scale_values(scale: float | str, reference: np.ndarray, lookup: Callable[[str | int], np.ndarray]) -> np.ndarray:
    """|scale| at each compared point; ``lookup`` returns a reference column at those points."""
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        return np.full(reference.shape, abs(float(scale)))
    if scale == "reference":
        return np.abs(reference)
    if scale == "max":
        finite = np.abs(reference[np.isfinite(reference)])
        return np.full(reference.shape, finite.max() if finite.size else np.nan)
    with np.errstate(all="ignore"):
        return np.abs(np.broadcast_to(evaluate(scale, lookup), reference.shape)).astype(float)


def evaluate(expression: str, lookup: Callable[[str | int], np.ndarray]) -> np.ndarray:
    try:
        value = scale_grammar.evaluate(expression, lookup, FUNCTIONS)
    except scale_grammar.ScaleError as exc:
        raise OracleInputError(str(exc), kind="bad scale") from None
    return np.asarray(value, dtype=float)
