"""A quick look at a reference file: its data sets, their column names and the first rows, without reading the
whole file (a folder of gigabytes is looked at in well under a second).

``peek_file`` uses the same rules as the oracle's readers (readers.py, read_text.py): a text table's header is
found exactly as the comparison will find it, an ``.npz`` or HDF5 group of 1-D arrays of one length is one
table of named columns, any other array is its own data set named by its part (``file.npz:key``,
``file.h5:/group/dset``). A field's coordinate (a ``times`` beside a trajectory's ``data``) and rows beyond a stated
``data_length`` are no data set of their own: layout.py decides it for init and the oracle alike. Only headers, up to
``SAMPLE_ROWS`` rows and 1-D coordinate candidates are read.
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nightshift.supervisor.verify.oracle.read_text import CLASS_HEADER, NUMBER, PROBE_BYTES, _delimiter_for, _header_names, \
    _probe, _split, _with_units
from nightshift.supervisor.verify.oracle.layout import axis_word, misfit_coordinates, sibling_coordinate
from nightshift.supervisor.verify.oracle.pointers import absent_content
from nightshift.supervisor.verify.oracle.readers import read_table
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table, table_from_array

SAMPLE_ROWS = 200
JSON_LIMIT = 64 << 20  # a JSON file is parsed whole; bigger ones are listed, not sampled


@dataclass
class DataSet:
    """One comparable data set in a file: ``part`` is None for the whole file. A table has a ``sample``; an N-d
    field (compared over all its elements) has its ``shape`` and no sample."""

    part: str | None
    sample: Table | None
    warnings: list[str] = field(default_factory=list)
    shape: tuple[int, ...] | None = None
    located: str | None = None  # a field's coordinates and where they come from ("t from /times, x, y from ...")

    @property
    def is_field(self) -> bool:
        return self.shape is not None


def peek_file(path: Path) -> list[DataSet]:
    """The data sets in ``path``; raises OracleInputError (one line) when it holds none."""
    problem = absent_content(path)
    if problem:
        raise OracleInputError(problem, kind="content not fetched")
    if path.stat().st_size == 0:
        raise OracleInputError(f"{path}: empty file", kind="empty file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            array = np.load(path, mmap_mode="r")
            if array.ndim >= 2 and not array.dtype.names:
                return [DataSet(None, None, shape=tuple(array.shape))]
            return [DataSet(None, table_from_array(str(path), _head(array)))]
        if suffix in (".nc", ".nc4", ".cdf"):
            return _peek_netcdf(path)
        if suffix == ".npz":
            return _peek_npz(path)
        if suffix in (".h5", ".hdf5"):
            return _peek_hdf5(path)
        if suffix == ".json":
            if path.stat().st_size > JSON_LIMIT:
                raise OracleInputError(f"{path}: JSON larger than {JSON_LIMIT >> 20} MB; name its comparison by "
                                       "hand", kind="too large to sample")
            return [DataSet(None, read_table(path))]
    except OracleInputError:
        raise
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, zipfile.BadZipFile) as exc:
        raise OracleInputError(f"{path}: cannot be read as {suffix} ({exc})", kind="unreadable file") from None
    return [_peek_text(path)]


def _head(array: np.ndarray) -> np.ndarray:
    return np.asarray(array[:SAMPLE_ROWS])


def _peek_text(path: Path) -> DataSet:
    with open(path, "rb") as handle:
        raw = handle.read(PROBE_BYTES)
    if b"\0" in raw:
        raise OracleInputError(f"{path}: binary data, not a text table", kind="binary file")
    complete = len(raw) < PROBE_BYTES
    text = raw.decode("utf-8", errors="replace")
    skip, comments, named_row, first = _probe(path, text, complete)
    delimiter = _delimiter_for(path, first)
    n = len(_split(first, delimiter))
    names = _header_names(comments, named_row, n, delimiter)
    lines = text.splitlines()[skip:]
    if not complete:
        lines = lines[:-1]  # the last line of the probe may be cut
    rows = []
    for number, line in enumerate(lines, skip + 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        fields = _split(body, delimiter)
        if len(fields) != n:
            raise OracleInputError(f"{path} line {number}: {len(fields)} columns, expected {n} like the first data "
                                   "row", kind="ragged table")
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            bad = next((f for f in fields if not NUMBER.match(f)), None) or next(f for f in fields if not _is_float(f))
            raise OracleInputError(f"{path} line {number}: {bad[:40]!r} is not a number", kind="non-numeric cell") \
                from None
        if len(rows) >= SAMPLE_ROWS:
            break
    data = np.array(rows, dtype=float).reshape(len(rows), n)
    warnings = []
    if all(name is None for name in names):
        header = named_row or (comments[-1] if comments else None)
        if header is not None:
            found = _header_words(header, delimiter)
            if found and len(found) != n:
                warnings.append(f"its header names {len(found)} columns ({', '.join(found[:8])}) but the rows have "
                                f"{n}; columns are named by index (0-based) until the header is fixed")
    return DataSet(None, Table(str(path), names, [data[:, i] for i in range(n)]), warnings)


def _header_words(line: str, delimiter: str | None) -> list[str]:
    body = line.lstrip("#").strip()
    numbered = CLASS_HEADER.findall(body)
    if numbered:
        return [name for _, name in numbered]
    words = [w for w in _split(body, delimiter) if w]
    return [] if any(NUMBER.match(w) for w in words) else (_with_units(words) if delimiter is None else words)


def _npy_member_head(archive: zipfile.ZipFile, name: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """(the first rows, the full shape) of one member of an .npz, read from its header and a few bytes only."""
    from nightshift.supervisor.verify.oracle.field import npy_header

    with archive.open(name) as handle:
        shape, fortran, dtype = npy_header(handle)
        if dtype.hasobject:
            raise OracleInputError(f"{name}: holds Python objects, not numbers", kind="not numeric")
        rows = min(shape[0], SAMPLE_ROWS) if shape else 1
        if fortran and len(shape) > 1:  # columns are contiguous: read them whole (rare for references)
            return np.load(archive.open(name), allow_pickle=False)[:SAMPLE_ROWS], shape
        per_row = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        count = rows * per_row
        data = np.frombuffer(handle.read(count * dtype.itemsize), dtype=dtype, count=count)
        return (data.reshape((rows, *shape[1:])) if shape else data.reshape(())), shape


def _grouped(where: str, arrays: dict[str, np.ndarray], lengths: dict[str, int]) -> list[tuple[str | None, Table]]:
    """Columns of one length as one table (read whole by the oracle's reader, as here); columns of several lengths,
    one data set per array. ``arrays``: the 1-D members layout.table_members takes (a number is no column)."""
    ones = {k: a for k, a in arrays.items() if a.ndim == 1}
    if len(ones) == len(arrays) and len(arrays) > 1 and len(set(lengths.values())) == 1:
        width = min(len(a) for a in arrays.values())
        rows = np.empty(width, dtype=[(k, float) for k in arrays])
        for k, a in arrays.items():
            rows[k] = np.asarray(a[:width], dtype=float)
        return [(None, table_from_array(where, rows))]
    if len(arrays) == 1:
        return [(None, table_from_array(where, next(iter(arrays.values()))))]
    return [(k, table_from_array(f"{where}:{k}", a)) for k, a in arrays.items()]


def _peek_npz(path: Path) -> list[DataSet]:
    from nightshift.supervisor.verify.oracle.field import npz_shapes
    from nightshift.supervisor.verify.oracle.readers import npz_columns

    with np.load(path, allow_pickle=False) as archive:
        shapes = npz_shapes(archive)
        columns = npz_columns(archive, shapes)
        arrays, lengths, fields = {}, {}, []
        for key, shape in shapes.items():
            if len(shape) >= 2:
                coordinate = sibling_coordinate(shapes, key, lambda k: archive[k])
                misfits = [] if coordinate else misfit_coordinates(shapes, key, lambda k: archive[k])
                fields.append(DataSet(key, None, misfits, tuple(shape), None if coordinate is None else
                                      f"{axis_word(coordinate) or coordinate} from {coordinate}"))
            elif key in columns:
                arrays[key], lengths[key] = _npy_member_head(archive.zip, key + ".npy")[0], shape[0] if shape else 0
    if not arrays and not fields:
        raise OracleInputError(f"{path}: an .npz with no arrays", kind="no data")
    named = len(arrays) == 1 and len(shapes) > 1  # one column beside other members is named, as the reader needs
    tables = [DataSet(next(iter(arrays)) if part is None and named else part, table)
              for part, table in _grouped(str(path), arrays, lengths)] if arrays else []
    return tables + fields


def _peek_hdf5(path: Path) -> list[DataSet]:
    try:
        import h5py
    except ImportError:
        raise OracleInputError(f"{path}: reading HDF5 needs h5py; pip install h5py (or the nightshift[hdf5] extra)",
                               kind="h5py missing") from None
    from nightshift.supervisor.verify.oracle.hdf5_layout import GroupLayout, field_axes

    found: list[DataSet] = []
    with h5py.File(path, "r") as handle:
        groups = [handle] + [g for g in _walk(handle) if isinstance(g, h5py.Group)]
        for group in groups:
            prefix = group.name.rstrip("/")
            layout = GroupLayout(group)
            fields = [k for k, shape in layout.shapes.items() if len(shape) >= 2 and not layout.datasets[k].dtype.names]
            for k in fields:  # a field: compared over all its elements
                axes = field_axes(layout.datasets[k], layout)
                found.append(DataSet(f"{prefix}/{k}", None, axes.notes, layout.shapes[k], _located(axes)))
            members = {k: layout.datasets[k] for k in layout.table()}
            if not any(v.shape != () for v in members.values()):
                continue
            arrays = {k: np.asarray(v[()] if v.shape == () else v[:min(SAMPLE_ROWS, layout.data_rows(k))])
                      for k, v in members.items()}
            lengths = {k: layout.data_rows(k) if v.shape else 0 for k, v in members.items()}
            for part, table in _grouped(f"{path}:{group.name}", arrays, lengths):
                if part is None and len(arrays) == 1 and len(layout.datasets) > 1:  # one column beside others: named
                    part = next(iter(arrays))
                full = f"{prefix}/{part}" if part else (group.name if group.name != "/" else None)
                found.append(DataSet(full, table))
    if not found:
        raise OracleInputError(f"{path}: no datasets in this HDF5 file", kind="no data")
    return found


def _located(axes) -> str | None:
    """"t from /times; x, y from its grid attribute": the axes a location will name, and where they come from."""
    by_source: dict[str, list[str]] = {}
    for dim, source in zip(axes.dims, axes.sources):
        if source is not None:
            by_source.setdefault(source, []).append(dim)
    return "; ".join(f"{', '.join(dims)} from {source}" for source, dims in by_source.items()) or None


def _peek_netcdf(path: Path) -> list[DataSet]:
    from nightshift.supervisor.verify.oracle.layout import Axes
    from nightshift.supervisor.verify.oracle.netcdf import _open, axis_coordinates, data_variables

    handle = _open(path, "reference")
    try:
        found = []
        for name in data_variables(handle):
            dims, coords, sources = axis_coordinates(handle, handle.variables[name])
            found.append(DataSet(name, None, shape=tuple(handle.variables[name].shape),
                                 located=_located(Axes(dims, coords, [], sources))))
    finally:
        handle.close()
    if not found:
        raise OracleInputError(f"{path}: no data variables in this NetCDF file", kind="no data")
    return found


def _walk(group):
    for value in group.values():
        yield value
        if hasattr(value, "values"):
            yield from _walk(value)


__all__ = ["DataSet", "SAMPLE_ROWS", "peek_file"]


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
