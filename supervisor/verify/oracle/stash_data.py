"""A reference's values kept in a container of the workspace: a dataset of an HDF5, NetCDF, ``.npz`` or ``.npy``
file, or a text table (other than a candidate or a reference), with the shape and the values of a reference
dataset (a field, a table's column, a whole table), under any name, in any container, in any float type or
printed form that keeps the values (a reference table saved again with other spacing is still a copy).

Only metadata is read until two shapes agree: the workspace's datasets are listed, and a dataset is hashed (its
values as float64, block by block, so a 1 GiB field costs the memory of a block) only when a reference dataset
has its shape. Trivial values are no evidence (evidence.py): a match counts only when the reference holds at
least ``COPY_MIN_DISTINCT`` distinct informative values. Digests are kept while a file stays the same.

The workspace's containers are a stranger's files: opened pinned (untrusted.pinned), HDF5 links are not
followed (visititems walks hard links only) and a dataset stored in external or virtual files is not read.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Iterator

import numpy as np

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.verify.oracle.evidence import COPY_MIN_DISTINCT, distinct_count, is_axis
from nightshift.supervisor.verify.oracle.field import npy_header
from nightshift.supervisor.verify.oracle.readers import read_table

CONTAINERS = (".npy", ".npz", ".h5", ".hdf5", ".nc", ".nc4", ".cdf")
TEXT_TABLES = (".dat", ".txt", ".csv", ".tsv", ".out", ".tab", ".asc", "")  # read as tables when sized like one
BLOCK = 1 << 22  # elements hashed at a time
MAX_ELEMENTS = 1 << 28  # a dataset larger than this (2 GiB of float64) is not hashed
_LISTED: dict[tuple, dict[str, tuple[int, ...]]] = {}  # _key -> {dataset: shape}
_HASHED: dict[tuple, tuple[str, int]] = {}  # (*_key, dataset) -> (digest, distinct values)
_TEXT: dict[tuple, dict[str, np.ndarray]] = {}  # the last text table parsed: _key -> its datasets
_REFERENCE_TABLES: dict[tuple, list[tuple[str, tuple[int, ...], str, int]]] = {}  # (*_key, part, x) ->
# [(dataset, shape, digest, distinct)] of a table reference: parsed once while it stays the same, not every verdict


def _key(path: Path) -> tuple:
    """What a file's cached listing and digests are kept under: its inode, size and times (as stash.digests). A
    workspace file is pinned (untrusted.pinned), so this is the stat of the very file opened; the mtime alone can be
    set back by its writer, the ctime cannot."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[dict]:
    """{dataset name: a sliceable array} of a container, open for the ``with``."""
    suffix = path.suffix.lower()
    with contextlib.ExitStack() as stack:
        if suffix == ".npy":
            yield {"": np.load(path, mmap_mode="r", allow_pickle=False)}
        elif suffix == ".npz":
            archive = stack.enter_context(np.load(path, allow_pickle=False))
            yield {name: _Lazy(archive, name) for name in archive.files}
        elif suffix not in CONTAINERS:
            key = _key(path)
            if key not in _TEXT:  # a text table is parsed once a verdict, not once per dataset asked of it
                _TEXT.clear()
                _TEXT[key] = _table_arrays(read_table(path))
            yield _TEXT[key]
        elif _is_hdf5(path):
            import h5py
            handle = stack.enter_context(h5py.File(path, "r"))
            found: dict = {}
            handle.visititems(lambda name, node: found.__setitem__("/" + name, node)
                              if isinstance(node, h5py.Dataset) and not node.is_virtual and not node.external
                              else None)
            yield found
        else:  # classic NetCDF
            from nightshift.supervisor.verify.oracle.netcdf import _open
            handle = _open(path, "both")
            stack.callback(handle.close)
            yield dict(handle.variables)


class _Lazy:
    """An .npz member read only when it is sliced (listing an archive reads no values)."""

    def __init__(self, archive, name: str):
        self.archive, self.name = archive, name
        with archive.zip.open(f"{name}.npy") as member:
            self.shape, _, self.dtype = npy_header(member)
        self._values = None

    def __getitem__(self, index):
        if self._values is None:
            self._values = self.archive[self.name]
        return self._values[index]


def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(8) == b"\x89HDF\r\n\x1a\n"


def _shapes(path: Path) -> dict[str, tuple[int, ...]]:
    key = _key(path)
    if key not in _LISTED:
        if len(_LISTED) > 4096:  # a workspace that churns through files: forget the old ones
            _LISTED.clear()
        with _opened(path) as arrays:
            _LISTED[key] = {name: tuple(int(n) for n in a.shape) for name, a in arrays.items()
                            if np.issubdtype(getattr(a, "dtype", np.dtype(float)), np.number)}
    return _LISTED[key]


def _digest(path: Path, name: str) -> tuple[str, int]:
    """(sha1 of the values as float64 with -0 and every NaN made one, distinct informative values up to enough)."""
    key = (*_key(path), name)
    if key not in _HASHED:
        if len(_HASHED) > 4096:
            _HASHED.clear()
        with _opened(path) as arrays:
            source = arrays[name]
            shape = tuple(source.shape)
            rows = max(1, BLOCK // max(1, int(np.prod(shape[1:])) if len(shape) > 1 else 1))
            _HASHED[key] = _hash_blocks(shape, [source[()]] if not shape else
                                        (source[i:i + rows] for i in range(0, shape[0], rows)))
    return _HASHED[key]


def _hash_blocks(shape: tuple[int, ...], blocks) -> tuple[str, int]:
    """(sha1 of ``shape`` and the blocks' values as float64 with -0 and every NaN made one, distinct informative
    values up to enough): one digest for a container's dataset, read a block at a time, and a table's array alike."""
    sha, seen = hashlib.sha1(repr(tuple(int(n) for n in shape)).encode()), 0
    for block in blocks:
        values = np.asarray(block, dtype=np.float64) + 0.0  # -0.0 equals 0.0 (and a copy: the NaNs are set below)
        values[np.isnan(values)] = np.nan
        sha.update(np.ascontiguousarray(values).tobytes())
        if seen < COPY_MIN_DISTINCT:
            seen = max(seen, distinct_count([values]))
    return sha.hexdigest(), seen


def _table_arrays(table, x: str | int | None = None) -> dict[str, np.ndarray]:
    """A table's datasets: the whole table and each column that is not its x or an evenly spaced axis (a grid the
    solver is given)."""
    found = {"": np.column_stack(table.columns)} if table.columns else {}
    for n, column in enumerate(table.columns):
        if not is_axis(column) and (x is None or x not in (n, str(n), table.names[n])):  # an unnamed column: None
            found[f"column {table.names[n] or n}"] = np.asarray(column, dtype=np.float64)
    return found


def _table_digests(path: Path, part: str | None, x: object) -> list[tuple[str, tuple[int, ...], str, int]]:
    """[(dataset, shape, digest, distinct)] of a table reference's datasets (_table_arrays), kept while the file
    stays the same: a 20 MB reference is parsed once, not at every verdict a 1-D or 2-D input is in the workspace."""
    key = (*_key(path), part, repr(x))
    if key not in _REFERENCE_TABLES:
        if len(_REFERENCE_TABLES) > 256:
            _REFERENCE_TABLES.clear()
        _REFERENCE_TABLES[key] = [(name, tuple(values.shape), *_hash_blocks(values.shape, [values]))
                                  for name, values in _table_arrays(read_table(path, part), x).items()]
    return _REFERENCE_TABLES[key]


def dataset_copies(root: Path, containers: list[str], references: list[tuple[str, Path, str | None, bool, object]]
                   ) -> tuple[list[str], list[str]]:
    """(findings, notes): each dataset of the workspace's ``containers`` (workspace-relative paths) that holds the
    values of a dataset of ``references`` ([(label, file, part, held out, x)]) with enough distinct values to be
    evidence. A held-out reference is named by its label alone (no dataset or column name of it)."""
    if not containers:
        return [], []
    mine: dict[tuple[int, ...], list[tuple[str, str]]] = {}
    notes: list[str] = []
    for rel in containers:
        try:
            with untrusted.pinned(root, root / rel) as path:
                for name, shape in _shapes(path).items():
                    if int(np.prod(shape)) >= COPY_MIN_DISTINCT:
                        mine.setdefault(shape, []).append((rel, name))
        except Exception:  # noqa: BLE001 - a file that is not what its name says holds no dataset to compare
            continue
    found: dict[tuple[int, ...], list[tuple[str, str, int]]] = {}  # shape -> [(label, digest, distinct)]
    for label, path, part, secret, x in references:
        try:
            if path.suffix.lower() in CONTAINERS:
                for name, shape in _shapes(path).items():
                    if shape in mine and (part is None or name.lstrip("/") == part.lstrip("/")):
                        where = f"{label}:{name}" if name and not secret else label
                        found.setdefault(shape, []).append((where, *_digest(path, name)))
            elif any(len(s) <= 2 for s in mine):
                for name, shape, digest, distinct in _table_digests(path, part, x):
                    if shape in mine:
                        where = f"{label} ({name})" if name and not secret else label
                        found.setdefault(shape, []).append((where, digest, distinct))
        except Exception:  # noqa: BLE001 - an unreadable reference is the comparison's finding, not this scan's
            continue
    findings, named = [], set()
    for shape, refs in found.items():
        for rel, name in mine[shape]:
            if rel in named:
                continue  # one finding a file: its first copied dataset says it
            if int(np.prod(shape)) > MAX_ELEMENTS:
                notes.append(f"{rel}:{name} was not compared with the references (more than {MAX_ELEMENTS} values)")
                continue
            try:
                with untrusted.pinned(root, root / rel) as path:
                    digest = _digest(path, name)[0]
            except Exception:  # noqa: BLE001 - as above
                continue
            hit = next((where for where, ref, distinct in refs if ref == digest and distinct >= COPY_MIN_DISTINCT),
                       None)
            if hit:
                named.add(rel)
                at = f"{rel}:{name}" if name else rel
                findings.append(f"{at} holds the values of {hit}, every one equal: a copy of a reference kept in "
                                "the workspace, which the solver can read in place of computing; delete it and "
                                "compute the output")
    return findings, notes
