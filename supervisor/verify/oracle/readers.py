"""Read any supported file into a Table: text tables, ``.npy``/``.npz``, HDF5 (h5py optional) and JSON.

A part of a container is picked with a suffix: ``out/cls.npz:cl``, ``out/run.h5:/spectra/cl``,
``out/result.json:spectra.cl``. Without one, an ``.npz`` or HDF5 group whose members are 1-D arrays of one
length is read as named columns; a single array is read as a table. The N-d fields beside them, and a field's
coordinate (layout.py), are not columns: field.py reads those. Rows beyond a stated ``data_length`` are not read.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from nightshift.supervisor.config.oracle_rules import CONTAINERS, split_part  # noqa: F401 - callers import them here
from nightshift.supervisor.verify.oracle.pointers import absent_content
from nightshift.supervisor.verify.oracle.read_text import read_text_table
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table, table_from_array



def read_table(path: Path, part: str | None = None) -> Table:
    if not path.exists():
        problem = absent_content(path)  # a git-annex link to content this clone does not have
        raise OracleInputError(problem or f"{path}: no such file", kind="content not fetched" if problem else
                               "missing file")
    if path.is_dir():
        raise OracleInputError(f"{path}: is a directory, not a file", kind="missing file")
    suffix = path.suffix.lower()
    problem = absent_content(path)
    if problem:
        raise OracleInputError(problem, kind="content not fetched")
    try:
        if suffix == ".npy":
            return table_from_array(str(path), np.load(path, allow_pickle=False))
        if suffix == ".npz":
            return _read_npz(path, part)
        if suffix in (".h5", ".hdf5"):
            return _read_hdf5(path, part)
        if suffix == ".json":
            return _read_json(path, part)
        if suffix in (".nc", ".nc4", ".cdf"):
            from nightshift.supervisor.verify.oracle.netcdf import read_netcdf_table
            return read_netcdf_table(path, part)
    except OracleInputError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OracleInputError(f"{path}: cannot be read as {suffix} ({exc})", kind="unreadable file") from None
    return read_text_table(path)


def _columns_table(path: str, members: dict[str, np.ndarray]) -> Table:
    arrays = {k: np.asarray(v) for k, v in members.items()}
    if len(arrays) == 1:
        return table_from_array(path, next(iter(arrays.values())))
    lengths = {a.shape for a in arrays.values()}
    if all(a.ndim == 1 for a in arrays.values()) and len(lengths) == 1:
        return table_from_array(path, _structured(arrays))
    raise OracleInputError(f"{path}: holds {sorted(arrays)}; name one as '{path}:<name>' (or store 1-D "
                           "columns of one length)", kind="ambiguous container")


def _structured(arrays: dict[str, np.ndarray]) -> np.ndarray:
    n = len(next(iter(arrays.values())))
    out = np.empty(n, dtype=[(k, float) for k in arrays])
    for k, v in arrays.items():
        if not np.issubdtype(v.dtype, np.number):
            raise OracleInputError(f"member {k!r} holds {v.dtype} values, not numbers", kind="not numeric")
        out[k] = v
    return out


def _read_npz(path: Path, part: str | None) -> Table:
    with np.load(path, allow_pickle=False) as archive:
        if part is not None:
            if part not in archive.files:
                raise OracleInputError(f"{path}: no array {part!r}; it has {archive.files}", kind="unknown part")
            return table_from_array(f"{path}:{part}", archive[part])
        keys = _columns_or_all(npz_columns(archive), archive.files)
        return _columns_table(str(path), {k: archive[k] for k in keys})


def _columns_or_all(columns: list[str], members: list[str]) -> list[str]:
    """Columns of a table beside fields are read as one; one array beside others is named by its part (peek names
    it so), and without columns the members are read as they are (one 2-D array: a table of its columns)."""
    return columns if len(columns) > 1 or len(columns) == len(members) else members


def npz_columns(archive, shapes: dict[str, tuple[int, ...]] | None = None) -> list[str]:
    """The members a table read of an .npz takes: as for an HDF5 group (hdf5_layout.GroupLayout.table).
    ``shapes``: field.npz_shapes(archive), when the caller has read them."""
    from nightshift.supervisor.verify.oracle.field import npz_shapes
    from nightshift.supervisor.verify.oracle.layout import sibling_coordinate, table_members

    shapes = shapes if shapes is not None else npz_shapes(archive)
    fields = [k for k, s in shapes.items() if len(s) >= 2]
    coordinates = {sibling_coordinate(shapes, k, lambda key: archive[key]) for k in fields} - {None}
    return table_members({k: s for k, s in shapes.items() if len(s) == 1}, coordinates)


def _read_hdf5(path: Path, part: str | None) -> Table:
    try:
        import h5py
    except ImportError:
        raise OracleInputError(f"{path}: reading HDF5 needs h5py; pip install h5py (or the nightshift[hdf5] "
                               "extra)", kind="h5py missing") from None
    from nightshift.supervisor.verify.oracle.hdf5_layout import (GroupLayout, LinkRefused, data_rows, hard_members, hard_node,
                                                      refuse_outside_storage)

    with h5py.File(path, "r") as handle:
        where = f"{path}:{part}" if part else str(path)
        try:  # through hard links only, and no values kept in other files (a reference's, by a link)
            node = hard_node(handle, part)
            if isinstance(node, h5py.Dataset):
                return table_from_array(where, node[()] if not node.shape else node[:data_rows(node)])
            layout = GroupLayout(node)
            keys = _columns_or_all(layout.table(), [k for k, v in hard_members(node) if isinstance(v, h5py.Dataset)])
            for key in keys:
                refuse_outside_storage(node[key])
        except LinkRefused as exc:
            raise OracleInputError(f"{where}: {exc}", kind="untrusted file") from None
        members = {k: node[k][()] if not node[k].shape else node[k][:data_rows(node[k], layout)] for k in keys}
        if not members:
            raise OracleInputError(f"{where}: no datasets here; name one as '{path}:/group/dataset'",
                                   kind="unknown part")
        return _columns_table(where, members)


def _read_json(path: Path, part: str | None) -> Table:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    where = str(path)
    for key in (part.split(".") if part else []):
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            raise OracleInputError(f"{path}: no member {key!r} on the way to {part!r}", kind="unknown part")
        where = f"{path}:{part}"
    if isinstance(data, dict):  # {"l": [...], "TT": [...]}
        return _columns_table(where, {k: _json_array(where, v, k) for k, v in data.items()})
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):  # [{"l": 2, "TT": ...}]
        keys = list(data[0])
        return _columns_table(where, {k: _json_array(where, [r.get(k) for r in data], k) for k in keys})
    if isinstance(data, list) and data and all(isinstance(r, list) for r in data) and \
            all(isinstance(c, str) for c in data[0]):  # [["l", "TT"], [2, 1.0], ...]
        rows = _json_array(where, data[1:], None)
        table = table_from_array(where, rows)
        return Table(where, list(data[0]), table.columns) if len(data[0]) == len(table.columns) else table
    return table_from_array(where, _json_array(where, data, None))


def _json_array(where: str, value: object, name: str | None) -> np.ndarray:
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError):
        what = f"member {name!r}" if name else "the array"
        raise OracleInputError(f"{where}: {what} is not an array of numbers (or null); rows must have one "
                               "length", kind="not numeric") from None
