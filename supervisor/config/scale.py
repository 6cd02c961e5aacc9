"""The grammar of a scale expression (``sqrt(TT*EE)``, ``col("name")``, arithmetic, a few functions): parsed with
``ast`` and walked with the functions the caller gives, so a config can never run code. The config checks the
structure here; the oracle evaluates the same walk over numpy arrays.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

# How many arguments each function takes: numpy's ufuncs take a further positional `out=`, so sqrt(TT, EE) would
# write into the reference's EE column; the count is part of the grammar.
FUNCTION_ARITY = {"sqrt": 1, "abs": 1, "exp": 1, "log": 1, "log10": 1, "max": 2, "min": 2}
FUNCTION_NAMES = tuple(FUNCTION_ARITY)
_SIGNATURES = ", ".join(f"{n}({', '.join('x' * k)})" for n, k in FUNCTION_ARITY.items())


class ScaleError(ValueError):
    """A scale expression that is not allowed."""


OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


def evaluate(expression: str, lookup: Callable[[str | int], Any], functions: dict[str, Callable[..., Any]]) -> Any:
    """The value of ``expression``; raises ScaleError naming what is not allowed."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise ScaleError(f"scale {expression!r} is not an expression (use 'reference', 'max', a number, "
                         "or e.g. 'sqrt(TT*EE)')") from None
    return _eval(tree.body, expression, lookup, functions)


def _eval(node: ast.AST, text: str, lookup, functions):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.left, text, lookup, functions),
                                        _eval(node.right, text, lookup, functions))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_eval(node.operand, text, lookup, functions))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id == "col" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            return lookup(node.args[0].value)
        if node.func.id in functions and len(node.args) == FUNCTION_ARITY.get(node.func.id):
            return functions[node.func.id](*[_eval(a, text, lookup, functions) for a in node.args])
    raise ScaleError(f"scale {text!r}: {ast.unparse(node)!r} is not allowed (arithmetic, numbers, column "
                     f"names, col('name'), {_SIGNATURES})")


def check_scale(scale: float | str) -> None:
    """Raise ValueError when a scale is neither a keyword, a number nor an allowed expression; column names are
    checked only when the data is read."""
    if not isinstance(scale, str) or scale in ("reference", "max"):
        return
    try:
        evaluate(scale, lambda key: 1.0, {name: (lambda *args: 1.0) for name in FUNCTION_NAMES})
    except ArithmeticError:
        pass  # the structure is allowed; values are the data's business
