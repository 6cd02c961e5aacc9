"""nightshift's equality probe (verify/probes) in a real pytest run, as the verdict loads it: every kind of object
whose `==` holds whatever it is compared with is named in the JUnit report, in whichever operand or container it
hides, and honest comparisons (plain values, pytest.approx, mock.ANY, numpy scalars, containers, custom classes
with a real __eq__) are not."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nightshift.supervisor.verify.checks import run_tests

TESTS = '''from unittest import mock

import numpy as np
import pytest


class AlwaysInt(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__


class AlwaysFloat(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__


class AlwaysStr(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__


class Anything:
    def __eq__(self, other):
        return True


class Point:  # an honest value class
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


def test_int_subclass():
    assert AlwaysInt(1) == 4


def test_float_subclass_on_the_right():
    assert 2.5 == AlwaysFloat(0.0)


def test_str_subclass():
    assert AlwaysStr("x") == "expected"


def test_plain_object():
    assert Anything() == 42


def test_inside_a_list():
    assert [1, AlwaysInt(0)] == [1, 7]


def test_inside_a_dict():
    assert {"a": Anything()} == {"a": 3}


def test_honest_values():
    assert 2 + 2 == 4 and "ab" == "a" + "b" and [1, (2, 3)] == [1, (2, 3)] and {"k": 1.5} == {"k": 1.5}


def test_honest_approx():
    assert 0.1 + 0.2 == pytest.approx(0.3)


def test_honest_class():
    assert Point(3) == Point(3) and Point(3) != Point(4)


def test_honest_numpy_scalars():  # float and str subclasses with an __eq__ of their own, and honest
    values = np.array([0.5, 1.0])
    assert values.sum() == 1.5 and np.float64("inf") == float("inf") and np.float64(1e300) == 1e300
    assert np.str_("ab") == "ab" and np.bool_(True) == True and [np.float64(2.0)] == [2.0]  # noqa: E712


def test_honest_wildcard():
    assert {"id": 7, "at": 3.5} == {"id": mock.ANY, "at": 3.5} and mock.ANY == [1]
'''


def test_every_always_equal_object_is_named_and_no_honest_comparison_is(tmp_path):
    (tmp_path / "test_values.py").write_text(TESTS)
    out = tmp_path / "out"
    out.mkdir()
    ran = run_tests(f"{sys.executable} -m pytest -q -p no:cacheprovider", tmp_path, 120, out, True, probe=True)
    assert ran.status == 0 and len(ran.results) == 11, ran.output[-2000:]
    named = {test_id.split("::")[1]: " ".join(found) for test_id, found in ran.always_equal.items()}
    assert set(named) == {"test_int_subclass", "test_float_subclass_on_the_right", "test_str_subclass",
                          "test_plain_object", "test_inside_a_list", "test_inside_a_dict"}, named
    assert "test_values.AlwaysInt (a subclass of int with its own __eq__)" in named["test_int_subclass"]
    assert "test_values.Anything (equal to an object it was never given)" in named["test_plain_object"]


def test_without_the_probe_nothing_is_looked_at(tmp_path):
    (tmp_path / "test_values.py").write_text(TESTS)
    out = Path(tmp_path / "out")
    out.mkdir()
    ran = run_tests(f"{sys.executable} -m pytest -q -p no:cacheprovider", tmp_path, 120, out, True)
    assert ran.status == 0 and ran.always_equal == {}


def test_a_bytecode_cache_left_by_a_run_without_the_probe_does_not_switch_it_off(tmp_path, monkeypatch):
    # pytest's rewritten .pyc does not record the assertion pass hook: the baseline's (or the agent's own) pytest
    # run caches one without it, and the probe's run must not reuse it.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    (tmp_path / "test_values.py").write_text(TESTS)
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=False)  # the agent's own pytest
    (tmp_path / "probed").mkdir()
    ran = run_tests(command, tmp_path, 120, tmp_path / "probed", True, probe=True)
    assert list((tmp_path / "__pycache__").glob("test_values.*pytest*.pyc")), "the first run cached nothing"
    assert "test_int_subclass" in " ".join(ran.always_equal), ran.output[-2000:]
