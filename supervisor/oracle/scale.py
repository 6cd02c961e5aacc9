"""What a relative error is relative to: the reference itself, the column's largest magnitude, a number, or an
expression of reference columns (``sqrt(TT*EE)`` for a TE spectrum that crosses zero).

Expressions are parsed with ``ast`` and evaluated over numpy arrays; only arithmetic, numbers, column names,
``col("name with spaces")``/``col(3)`` and the functions below are allowed, so a config can never run code.
"""
from __future__ import annotations

import ast
import operator
from typing import Callable

import numpy as np

from supervisor.oracle.table import OracleInputError

FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "sqrt": np.sqrt, "abs": np.abs, "exp": np.exp, "log": np.log, "log10": np.log10,
    "max": np.maximum, "min": np.minimum,
}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


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


def check_scale(scale: float | str) -> None:
    """Raise ValueError (for the config loader) when a scale is neither a keyword, a number nor an allowed
    expression; column names are checked only when the data is read."""
    if not isinstance(scale, str) or scale in ("reference", "max"):
        return
    try:
        evaluate(scale, lambda key: np.ones(1))
    except OracleInputError as exc:
        raise ValueError(str(exc)) from None


def evaluate(expression: str, lookup: Callable[[str | int], np.ndarray]) -> np.ndarray:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise OracleInputError(f"scale {expression!r} is not an expression (use 'reference', 'max', a number, "
                               "or e.g. 'sqrt(TT*EE)')", kind="bad scale") from None
    return np.asarray(_eval(tree.body, expression, lookup), dtype=float)


def _eval(node: ast.AST, text: str, lookup: Callable[[str | int], np.ndarray]):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.left, text, lookup), _eval(node.right, text, lookup))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.operand, text, lookup))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id == "col" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            return lookup(node.args[0].value)
        if node.func.id in FUNCTIONS:
            return FUNCTIONS[node.func.id](*[_eval(a, text, lookup) for a in node.args])
    raise OracleInputError(f"scale {text!r}: {ast.unparse(node)!r} is not allowed (arithmetic, numbers, column "
                           f"names, col('name'), {', '.join(FUNCTIONS)})", kind="bad scale")
