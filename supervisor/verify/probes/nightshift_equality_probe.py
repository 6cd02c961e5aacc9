"""A pytest plugin nightshift loads into a held-out test run (never the agent's): every comparison an assertion makes
is looked at as it passes, and an operand whose ``==`` holds whatever it is compared with (a subclass of int, float,
str... equal to a plain value it is not, or one equal to a fresh object) is written into the JUnit report as a property of the
test (``nightshift_always_equal``), where the supervisor reads it from outside the solver's process.

Loaded with ``-p nightshift_equality_probe -o enable_assertion_pass_hook=true``: with the pass hook on, pytest's
rewritten asserts ask ``pytest_assertrepr_compare`` about passing comparisons too, with the objects themselves.
"""
from __future__ import annotations

import sys

BUILTINS = (bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
_HONEST = frozenset(BUILTINS) | {type(None)}  # exact types, never a subclass: their == is CPython's, not a test's
PROPERTY = "nightshift_always_equal"
_current: list = []  # the test item running now


def _never_a_cached_rewrite() -> None:
    """pytest's rewritten ``.pyc`` does not record whether the assertion pass hook was on, so one written by a run
    without this probe (the agent's own pytest) would be reused and switch the probe off: here every test module and
    conftest.py is rewritten afresh and nothing is written back (a held-out run leaves no bytecode of its tests).
    An installed package's modules (pytest plugins, which pytest rewrites too: 90 of them in a well-stocked venv)
    keep their cache: their asserts are not the tests'. Python's own bytecode cache (pytest, numpy, the solver's
    modules) is left as it is: a fresh PYTHONPYCACHEPREFIX compiled all of them again at every run (the held-out
    tests' run went from 1.3x to 3x a plain pytest)."""
    from _pytest.assertion import rewrite
    read, write = getattr(rewrite, "_read_pyc", None), getattr(rewrite, "_write_pyc", None)
    if callable(read) and callable(write):
        rewrite._read_pyc = lambda source, pyc, *args, **kwargs: (
            read(source, pyc, *args, **kwargs) if _installed(pyc) else None)
        rewrite._write_pyc = lambda state, co, source_stat, pyc, *args, **kwargs: (
            write(state, co, source_stat, pyc, *args, **kwargs) if _installed(pyc) else False)
    else:  # a pytest whose cache functions moved: a bytecode cache of this run's own, correct but slower
        import tempfile
        sys.pycache_prefix = tempfile.mkdtemp(prefix="nightshift-pyc-")


def _installed(path) -> bool:
    """A file of an installed package (site-packages), not of the tree the tests run in."""
    return any(part in ("site-packages", "dist-packages") for part in str(path).split("/"))


_never_a_cached_rewrite()  # a -p plugin is imported before any test module or conftest.py is rewritten


class _Fresh:
    """Equal to nothing but itself: what an honest value never equals."""


def _other_plain_value(value, base):
    """A plain ``base`` value different from ``value``, made by ``base``'s own methods (never ``value``'s: a forged
    subclass cannot choose what it is compared with)."""
    if base is dict:
        other = dict.copy(value)
        other[_Fresh()] = None
        return other
    if base in (set, frozenset):
        return base.union(value, {_Fresh()})
    step = {int: 1, float: 1.0, complex: 1, str: "\0", bytes: b"\0", tuple: (_Fresh(),), list: [_Fresh()]}[base]
    other = base.__add__(value, step)
    if base in (float, complex) and base.__eq__(other, value) is True:
        other = base.__neg__(value)  # inf, or too large to step by one: its negative differs
    return other


def _allowed(value) -> bool:
    """Wildcards a test uses on purpose: unittest.mock.ANY is equal to everything by design."""
    mock = sys.modules.get("unittest.mock")
    return mock is not None and value is mock.ANY


def _equal_to_anything(value) -> str | None:
    """What ``value`` is when its ``==`` holds for what it was never given; None for an honest value. Judged by
    behaviour, not by type: numpy.float64 or numpy.str_ subclass float and str with an ``__eq__`` of their own and
    compare honestly."""
    kind = type(value)
    if kind in _HONEST or kind.__eq__ is object.__eq__:  # a builtin's own C comparison, or identity: nothing to ask
        return None
    if _allowed(value):
        return None
    name = f"{kind.__module__}.{kind.__qualname__}"
    base = next((b for b in BUILTINS if isinstance(value, b)), None)
    try:  # each question on its own: an __eq__ that raises answers no to that one only
        if base is not None and kind is not base and bool(value == _other_plain_value(value, base)):
            return f"{name} (a subclass of {base.__name__} with its own __eq__)"
    except Exception:  # noqa: BLE001 - an __eq__ (or a value) that raises is not equal to anything
        pass
    try:
        if bool(value == _Fresh()):
            return f"{name} (equal to an object it was never given)"
    except Exception:  # noqa: BLE001
        pass
    return None


def _inside(value, depth: int = 3, budget: list | None = None):
    """``value`` and what it holds (list, tuple, set and dict values, a few levels, at most 1000 of them): a container
    compares its items with their own ``==``, so an always-equal item makes the container equal too."""
    budget = budget if budget is not None else [1000]
    yield value
    if depth and type(value) in (list, tuple, set, frozenset, dict):
        for item in (value.values() if type(value) is dict else value):
            budget[0] -= 1
            if budget[0] < 0:
                return
            yield from _inside(item, depth - 1, budget)


def pytest_runtest_setup(item):
    _current[:] = [item]


def pytest_assertion_pass(item, lineno, orig, expl):
    """Present so that pytest builds the comparison's explanation (and so asks about its operands) on a pass."""


def pytest_assertrepr_compare(config, op, left, right):
    if op not in ("==", "!=") or not _current:
        return None
    for value in (v for operand in (left, right) for v in _inside(operand)):
        found = _equal_to_anything(value)
        if found:
            item = _current[0]
            if (PROPERTY, found) not in item.user_properties:
                item.user_properties.append((PROPERTY, found))
    return None
