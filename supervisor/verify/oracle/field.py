"""An N-dimensional field read as what it is: an HDF5 dataset, a NetCDF variable, an ``.npy`` array or an ``.npz``
member, with its dimension names and, where the file has them, its coordinates (HDF5 dimension scales, a 1-D
sibling of the first axis's length, a grid a JSON attribute states, NetCDF coordinate variables; see layout.py) and
only its rows that are data (a stated ``data_length``).

The values are not loaded: ``Field.source`` is sliced along the first axis, a block at a time, so a 1 GiB field is
compared in the memory of a few blocks (field_compare.py). ``open_field`` returns None for what is a table (a 1-D
array, a structured array, a group of columns): the table readers take those.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nightshift.supervisor.verify.oracle.layout import axis_word, dim_names, misfit_coordinates, sibling_coordinate
from nightshift.supervisor.verify.oracle.pointers import absent_content
from nightshift.supervisor.verify.oracle.table import OracleInputError

FIELD_SUFFIXES = (".npy", ".npz", ".h5", ".hdf5", ".nc", ".nc4", ".cdf")


@dataclass
class Field:
    where: str  # "file:part", as messages name it
    source: Any  # sliceable along axis 0: an h5py Dataset, a netCDF4 Variable, a numpy (memory-mapped) array
    shape: tuple[int, ...]
    dtype: np.dtype
    dims: list[str] = field(default_factory=list)
    coords: list[np.ndarray | None] = field(default_factory=list)  # one 1-D array per axis, or None
    notes: list[str] = field(default_factory=list)  # what the file states that was not used, and why
    written: int | None = None  # the rows written when a stated data_length says fewer are data

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@contextlib.contextmanager
def open_field(path: Path, part: str | None, side: str):
    """The field at ``path[:part]`` (opened for the length of the ``with``), or None when it is a table.
    A NetCDF variable of any rank is a field (its coordinates locate it)."""
    suffix = path.suffix.lower()
    if suffix not in FIELD_SUFFIXES or not path.exists():
        yield None
        return
    problem = absent_content(path)
    if problem:
        raise OracleInputError(problem, side, "content not fetched")
    with contextlib.ExitStack() as stack:
        try:
            if suffix == ".npy":
                found = _npy(path, np.load(path, mmap_mode="r", allow_pickle=False))
            elif suffix == ".npz":
                found = _npz(path, part, stack, side)
            elif suffix in (".h5", ".hdf5"):
                found = _hdf5(path, part, stack, side)
            else:
                from nightshift.supervisor.verify.oracle.netcdf import open_variable
                found = Field(**open_variable(path, part, stack, side))
        except OracleInputError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OracleInputError(f"{path}: cannot be read as {suffix} ({exc})", side, "unreadable file") from None
        if found is not None:
            _check_values(found, side)
        yield found


def _npy(where: Path | str, array: np.ndarray) -> Field | None:
    if array.dtype.names or array.ndim < 2:
        return None
    return Field(str(where), array, tuple(array.shape), array.dtype, dim_names(array.ndim), [None] * array.ndim)


def _npz(path: Path, part: str | None, stack: contextlib.ExitStack, side: str) -> Field | None:
    if part is None:
        return None
    archive = stack.enter_context(np.load(path, allow_pickle=False))
    if part not in archive.files:
        raise OracleInputError(f"{path}: no array {part!r} (it has {archive.files}); the file must hold it",
                               side, "missing field")
    found = _npy(f"{path}:{part}", archive[part])
    if found is not None:  # a 1-D member of the first axis's length beside it: that axis's coordinate
        shapes = npz_shapes(archive)
        coordinate = sibling_coordinate(shapes, part, lambda key: archive[key])
        if coordinate is not None:
            found.coords[0] = np.asarray(archive[coordinate], dtype=float)
            found.dims[0] = axis_word(coordinate) or coordinate
        else:
            found.notes += misfit_coordinates(shapes, part, lambda key: archive[key])
    return found


def npy_header(handle) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) of the .npy stream ``handle`` (at its start), read from its header only; the
    one reader of it (npz_shapes, peek.py, stash_data.py). Format 3.0 (utf-8 names) reads like 2.0 here."""
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    return read(handle)


def npz_shapes(archive) -> dict[str, tuple[int, ...]]:
    """The members' shapes, read from their headers."""
    shapes = {}
    for key in archive.files:
        with archive.zip.open(key + ".npy") as handle:
            shape, _, dtype = npy_header(handle)
        shapes[key] = tuple(shape) if not (dtype.names and len(shape) >= 2) else tuple(shape[:1])
    return shapes


def _hdf5(path: Path, part: str | None, stack: contextlib.ExitStack, side: str) -> Field | None:
    try:
        import h5py
    except ImportError:
        raise OracleInputError(f"{path}: reading HDF5 needs h5py; pip install h5py (or the nightshift[hdf5] "
                               "extra)", side, "h5py missing") from None
    from nightshift.supervisor.verify.oracle.hdf5_layout import GroupLayout, LinkRefused, field_axes, hard_node

    handle = stack.enter_context(h5py.File(path, "r"))
    try:
        node = hard_node(handle, part)  # a link to another file's dataset (a reference's) is not followed
    except KeyError:
        have = [k for k in _datasets(handle)][:12]
        raise OracleInputError(f"{path}: no dataset {part!r} (it has {have}); the file must hold it", side,
                               "missing field") from None
    except LinkRefused as exc:
        raise OracleInputError(f"{path}:{part or '/'}: {exc}", side, "untrusted file") from None
    if not isinstance(node, h5py.Dataset) or node.dtype.names or node.ndim < 2:
        return None
    layout = GroupLayout(node.parent)
    rows, _ = layout.rows[node.name.rsplit("/", 1)[-1]]
    axes = field_axes(node, layout)
    source = node if rows is None else FirstRows(node, rows)
    shape = (node.shape[0] if rows is None else rows, *node.shape[1:])
    return Field(f"{path}:{part}", source, shape, node.dtype, axes.dims, axes.coords, axes.notes,
                 None if rows is None else node.shape[0])


class FirstRows:
    """A dataset's first ``rows`` rows, sliced like it: the rows beyond a stated length are never read."""

    def __init__(self, source: Any, rows: int):
        self.source, self.rows = source, rows

    def __getitem__(self, key):
        if key is Ellipsis or isinstance(key, tuple) and not key:  # "all of it" ([()], [...]): the rows that are data
            return self.source[:self.rows]
        if isinstance(key, tuple) and key[0] is Ellipsis:  # [..., j]: the rows that are data, then the rest
            key = (slice(None), *key)
        first = key[0] if isinstance(key, tuple) and key else key
        if isinstance(first, slice):
            lo, hi, step = first.indices(self.rows)
            first = slice(lo, hi, step)
        elif isinstance(first, (int, np.integer)) and not -self.rows <= first < self.rows:
            raise IndexError(f"row {first} is beyond the {self.rows} rows that are data")
        elif isinstance(first, (int, np.integer)) and first < 0:
            first = int(first) + self.rows
        return self.source[(first, *key[1:]) if isinstance(key, tuple) and key else first]


def _datasets(handle) -> list[str]:
    found: list[str] = []
    handle.visititems(lambda name, node: found.append("/" + name) if hasattr(node, "dtype") else None)
    return found


def _check_values(found: Field, side: str) -> None:
    """Integer, boolean or complex data and a coordinate that is not monotonic are refused, naming the fix."""
    kind = found.dtype.kind
    if kind == "c":
        raise OracleInputError(f"{found.where}: complex values; compare the real and imaginary parts as two fields "
                               "(write them as two datasets)", side, "complex data")
    if kind in "iub":
        raise OracleInputError(f"{found.where}: {found.dtype} values, not floating point; an integer field agrees "
                               "exactly or not at all: store it as float, or check it with a test", side,
                               "integer data")
    if kind != "f":
        raise OracleInputError(f"{found.where}: holds {found.dtype} values, not numbers", side, "not numeric")
    for dim, coord in zip(found.dims, found.coords):
        if coord is None or len(coord) < 2:
            continue
        step = np.diff(coord)
        if not (np.all(step > 0) or np.all(step < 0)):
            bad = int(np.flatnonzero(~(step > 0) if step[0] > 0 else ~(step < 0))[0]) + 1 if len(step) else 0
            raise OracleInputError(f"{found.where}: its coordinate {dim!r} is not monotonic (at index {bad}: "
                                   f"{coord[bad]:.6g} after {coord[bad - 1]:.6g}); fix the coordinate variable",
                                   side, "coordinate not monotonic")


def location(found_dims: list[str], coords: list[np.ndarray | None], index: tuple[int, ...]) -> str:
    """Where an element is, in the field's own terms: "x=0.43, y=0.12 (i, j) = (107, 3)" with coordinates,
    "(107, 3)" without."""
    at = "(" + ", ".join(str(i) for i in index) + ")"
    named = [f"{d}={c[i]:.6g}" for d, c, i in zip(found_dims, coords, index) if c is not None]
    if not named:
        return f"index {at}"
    return f"{', '.join(named)} (index {at})"


__all__ = ["Field", "location", "open_field"]
