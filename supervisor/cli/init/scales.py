"""The scale of a reference data set, for the absolute tolerance `nightshift init` derives when the goal states
none: the RMS of the finite values of each field, and of each compared column of a table.

Why the RMS (as nccmp and cprnc normalise a difference by the field's own size): it is zero only when every value
is zero, so any field with something in it gets a floor (a high percentile of |reference| is zero for a pulse in
a quiet domain, and the median for most of a sparse field); one spike does not set it (the max would); and it is
the size round-off scales with, so the floor sits where a value is zero by symmetry (6e-17 one way, 2.2e-16
another) and not at physics the comparison must see. The files are read with the oracle's own readers.

init reads headers and samples, never a whole folder of gigabytes: a field is measured over at most
``SAMPLE_VALUES`` values (``SLABS`` slabs of its first axis spread over it, where it is bigger), a text table bigger
than ``WHOLE_TEXT_BYTES`` over rows sampled at ``SLABS`` places of the file; binary tables are read whole (cheap).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from supervisor.verify.oracle.field import open_field
from supervisor.verify.oracle.read_text import _delimiter_for, _split
from supervisor.verify.oracle.readers import read_table
from supervisor.verify.oracle.table import OracleInputError, Table

SAMPLE_VALUES = 1 << 18
SLABS = 16
WHOLE_TEXT_BYTES = 4 << 20  # a text table up to this size is parsed whole (~50 ms); a bigger one is sampled
TEXT_SLAB_BYTES = 1 << 16


@dataclass
class Scale:
    rms: float  # RMS of the finite values measured (0: every one of them is zero)
    values: int  # how many values it was measured over
    total: int | None  # how many the data set holds (None: unknown, a sampled text table)

    @property
    def sampled(self) -> bool:
        return self.total is None or self.values < self.total


def rms(values: np.ndarray) -> tuple[float, int]:
    """(RMS of the finite values, how many there were); scaled by the largest so 1e200 does not overflow."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = flat[np.isfinite(flat)]
    if not finite.size:
        return 0.0, 0
    top = float(np.max(np.abs(finite)))
    if top == 0:
        return 0.0, int(finite.size)
    return top * math.sqrt(float(np.mean(np.square(finite / top)))), int(finite.size)


def field_scale(path: Path, part: str | None) -> Scale | None:
    """The scale of the field at ``path[:part]``; None when it is a table or cannot be read (the oracle and
    `nightshift check` say why, in their words)."""
    try:
        with open_field(path, part, "reference") as found:
            if found is None:
                return None
            rows = found.shape[0] if found.shape else 1
            per_row = max(1, found.size // max(rows, 1))
            if found.size <= SAMPLE_VALUES:
                slabs = [np.asarray(found.source[()], dtype=np.float64)]
            else:
                take = max(1, SAMPLE_VALUES // SLABS // per_row)
                starts = sorted({int(s) for s in np.linspace(0, rows - take, SLABS)})
                slabs = [np.asarray(found.source[s:s + take], dtype=np.float64) for s in starts]
            value, count = rms(np.concatenate([s.reshape(-1) for s in slabs]))
            return Scale(value, count, found.size)
    except (OracleInputError, OSError, ValueError, TypeError, KeyError):
        return None


def column_scales(path: Path, part: str | None, keys: list[str | int]) -> dict[str, Scale]:
    """{str(key): its scale} for the compared columns of the table at ``path[:part]``; {} when it cannot be read."""
    try:
        text = path.suffix.lower() not in (".npy", ".npz", ".h5", ".hdf5", ".json", ".nc", ".nc4", ".cdf")
        if text and path.stat().st_size > WHOLE_TEXT_BYTES:
            table, total = _sampled_text(path), None
        else:
            table = read_table(path, part)
            total = table.rows
        found = {}
        for key in keys:
            value, count = rms(table.column(key, "reference"))
            found[str(key)] = Scale(value, count, total)
        return found
    except (OracleInputError, OSError, ValueError, TypeError, KeyError, IndexError):
        return {}


def _sampled_text(path: Path) -> Table:
    """The header of a big text table (read as the oracle reads it) with rows from ``SLABS`` places of the file:
    each slab starts at the next whole line; a line that is not a row of numbers of the table's width is left out."""
    from supervisor.verify.oracle.peek import peek_file

    head = peek_file(path)[0].sample
    width = len(head.columns)
    size = path.stat().st_size
    rows: list[list[float]] = [list(r) for r in zip(*head.columns)]
    delimiter = None
    with open(path, "rb") as handle:
        for start in np.linspace(size // SLABS, size - TEXT_SLAB_BYTES, SLABS - 1).astype(int):
            handle.seek(max(0, int(start)))
            lines = handle.read(TEXT_SLAB_BYTES).decode("utf-8", errors="replace").splitlines()[1:-1]
            for line in lines:
                body = line.split("#", 1)[0].strip()
                if not body:
                    continue
                delimiter = delimiter if delimiter is not None else _delimiter_for(path, body)
                cells = _split(body, delimiter)
                if len(cells) != width:
                    continue
                try:
                    rows.append([float(c) for c in cells])
                except ValueError:
                    continue
    data = np.array(rows, dtype=float).reshape(len(rows), width)
    return Table(str(path), list(head.names), [data[:, i] for i in range(width)])
