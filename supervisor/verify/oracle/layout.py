"""How a container lays out a field beside what describes it, decided in one place so that init (peek.py), the
table readers (readers.py) and the field reader (field.py) read every file the same way.

- A stated length: rows beyond an integer attribute ``data_length`` (py-pde's preallocating FileStorage writes 16
  rows and says 11 are data) are not data, on the dataset that states it or on the datasets of the group that
  states it which have the group's preallocated number of rows.
- A field's coordinates: an attached HDF5 dimension scale; else, for its first axis, a 1-D sibling of that length
  (a trajectory's ``times`` beside its ``data``), preferring a usual coordinate name, else the only monotonic one;
  for its last axes, a grid a JSON attribute states (grid_attribute.py).
- A group's table: its 1-D members that are not a field's coordinate (a coordinate beside other columns of its
  length stays: it is their x).
A coordinate of the wrong length is named in a note and never used.

Why a coordinate is not compared as data of its own: it is the grid the field is on, and the field comparison
already holds the candidate's coordinate to the reference's (to 1e-9 relative, as NetCDF coordinates and HDF5
dimension scales are: wrong output times fail as "its coordinate 't' differs"), so a tolerance of its own would
only add a second, looser check of the same numbers, and a line per file that says nothing about the physics.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

LENGTH_ATTRIBUTE = "data_length"
TIME_NAMES = ("t", "time", "times", "tau")
COORDINATE_NAMES = TIME_NAMES + ("x", "y", "z", "r", "step", "steps", "iteration", "iterations", "l", "ell", "k",
                                 "a", "z_grid", "x_grid", "grid")
AXES = "ijklmn"  # an axis no coordinate names


@dataclass
class Axes:
    """What a field's axes are, beside its values: names, coordinates (None where unknown) and notes."""

    dims: list[str]
    coords: list[np.ndarray | None]
    notes: list[str] = field(default_factory=list)
    sources: list[str | None] = field(default_factory=list)  # where each coordinate came from, for init's summary


def dim_names(count: int) -> list[str]:
    return [AXES[i] if i < len(AXES) else f"axis{i}" for i in range(count)]


def axis_word(name: str) -> str | None:
    """The axis a member's name says it is ("times": t), None for a name that is no coordinate's."""
    base = name.rsplit("/", 1)[-1].strip().lower()
    if base in TIME_NAMES:
        return "t"
    return base if base in COORDINATE_NAMES else None


def monotonic(values: np.ndarray) -> bool:
    """Strictly increasing or decreasing and finite: a grid, not a value column."""
    if len(values) < 2 or not np.all(np.isfinite(values)):
        return False
    step = np.diff(values)
    return bool(np.all(step > 0) or np.all(step < 0))


def sibling_coordinate(shapes: dict[str, tuple[int, ...]], name: str,
                       values: Callable[[str], np.ndarray]) -> str | None:
    """The 1-D member beside field ``name`` that is its first axis's coordinate: of that length and monotonic, by
    a usual coordinate name first, else the only monotonic one (two unnamed candidates: neither, no guess)."""
    rows = shapes[name][0]
    same = [k for k, s in shapes.items() if k != name and len(s) == 1 and s[0] == rows]
    named = [k for k in same if axis_word(k)]
    if named:
        return next((k for k in named if monotonic(_floats(values(k)))), None)
    found = [k for k in same if monotonic(_floats(values(k)))]
    return found[0] if len(found) == 1 else None


def misfit_coordinates(shapes: dict[str, tuple[int, ...]], name: str, values: Callable[[str], np.ndarray],
                       prefix: str = "") -> list[str]:
    """Notes for the 1-D members named as a time coordinate beside field ``name`` that cannot be its first axis's
    (called when none is): of another length, or not monotonic. Named, not used to locate (still compared as the
    values the file holds)."""
    rows = shapes[name][0]
    notes = []
    for k, s in shapes.items():
        if len(s) != 1 or axis_word(k) != "t":
            continue
        if s[0] != rows:
            notes.append(f"{prefix}{k} holds {s[0]} values but {prefix}{name} has {rows} rows: not used as its "
                         "coordinate (a coordinate has one value per row)")
        elif not monotonic(_floats(values(k))):
            notes.append(f"{prefix}{k} is not monotonic (or not finite): not used as the coordinate of {prefix}{name}")
    return notes


def table_members(shapes: dict[str, tuple[int, ...]], coordinates: set[str]) -> list[str]:
    """The members a table of this group is made of: 1-D ones that are not a field's coordinate, unless other 1-D
    members of the coordinate's length are there too (then it is their x). A number beside them is not a column."""
    ones = [k for k, s in shapes.items() if len(s) == 1]
    kept = [k for k in ones if k not in coordinates]
    return [k for k in ones if k not in coordinates or any(shapes[j] == shapes[k] for j in kept)]


def _floats(values: np.ndarray) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return np.array([])


def length_value(raw: object) -> int | None | str:
    """A stated length as an integer; a string saying why it is none (a note); None when nothing is stated."""
    if raw is None:
        return None
    value = raw
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            value = json.loads(value) if len(value) < 64 else value
        except ValueError:
            pass
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(-1)[0]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or \
            not float(value).is_integer():
        return f"{LENGTH_ATTRIBUTE} = {str(raw)[:40]!r} is not a number of rows: every row is compared"
    return int(value)


__all__ = ["Axes", "LENGTH_ATTRIBUTE", "axis_word", "dim_names", "length_value", "misfit_coordinates", "monotonic",
           "sibling_coordinate", "table_members"]
