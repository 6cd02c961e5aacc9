"""What pytest would collect, read from source (parsed, never imported): which files are test files and which of
their top-level statements are tests. One rule for `init --holdout-tests` choosing tests and the held-out run
naming them (verify/heldout_checkout.py).
"""
from __future__ import annotations

import ast
from pathlib import Path


def is_test_file(path: Path) -> bool:
    """pytest's default python_files: test_*.py and *_test.py."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def tests_in(source: str) -> list[ast.stmt]:
    """The top-level tests of a module's source: test* functions and Test* classes; none where it does not parse."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return []
    return [n for n in body if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))
            or (isinstance(n, ast.ClassDef) and n.name.startswith("Test"))]
