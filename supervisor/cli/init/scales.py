"""The scale of a reference data set, for the absolute tolerance `nightshift init` derives when the goal states
none: the RMS of the finite values of each field, and of each compared column of a table.

Why the RMS (as nccmp and cprnc normalise a difference by the field's own size): it is zero only when every value
is zero, so any field with something in it gets a floor (a high percentile of |reference| is zero for a pulse in
a quiet domain, and the median for most of a sparse field); one spike does not set it (the max would); and it is
the size round-off scales with, so the floor sits where a value is zero by symmetry (6e-17 one way, 2.2e-16
another) and not at physics the comparison must see. The files are read with the oracle's own readers.

init reads headers and samples, never a whole folder of gigabytes (bench/bench_init.py): a field is measured over
at most ``SAMPLE_VALUES`` values (``SLABS`` slabs of its first axis spread over it, where it is bigger); a table file
up to ``WHOLE_BYTES`` is read whole with the oracle's reader; a bigger text table over its first rows and rows from
``SLABS`` places of the file, a bigger binary one over the first rows init's survey read (peek.py). The comment
init writes says which.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nightshift.supervisor.verify.oracle.field import open_field
from nightshift.supervisor.verify.oracle.read_text import _delimiter_for, _split
from nightshift.supervisor.verify.oracle.readers import read_table
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table

SAMPLE_VALUES = 1 << 14
SLABS = 16
WHOLE_BYTES = 1 << 20  # a table file up to this size is read whole (a few ms); a bigger one is sampled
TEXT_SLABS = 5
TEXT_SLAB_BYTES = 1 << 13  # ~90 rows of a CLASS table a slab: ~450 rows in all with the head


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
    with np.errstate(all="ignore"):
        finite = flat if np.isfinite(flat.sum()) else flat[np.isfinite(flat)]
    if not finite.size:
        return 0.0, 0
    top = max(float(finite.max()), -float(finite.min()))
    if top == 0:
        return 0.0, int(finite.size)
    if 1e-150 < top < 1e150:  # the squares neither overflow nor vanish: one pass
        return math.sqrt(float(np.square(finite).sum()) / finite.size), int(finite.size)
    scaled = finite / top
    return top * math.sqrt(float(np.square(scaled).sum()) / finite.size), int(finite.size)


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
            if value == 0 and found.size > SAMPLE_VALUES:  # "zero everywhere" is said only of what was all read
                step = max(1, SAMPLE_VALUES * SLABS // per_row)
                value, count = _largest_rms(np.asarray(found.source[lo:lo + step], dtype=np.float64)
                                            for lo in range(0, rows, step))
            return Scale(value, count, found.size)
    except (OracleInputError, OSError, ValueError, TypeError, KeyError):
        return None


def column_scales(path: Path, part: str | None, keys: list[str | int], head: Table | None = None) -> dict[str, Scale]:
    """{str(key): its scale} for the compared columns of the table at ``path[:part]`` (``head``: its first rows, as
    the survey read them); {} when it cannot be read."""
    try:
        text = path.suffix.lower() not in (".npy", ".npz", ".h5", ".hdf5", ".json", ".nc", ".nc4", ".cdf")
        if path.stat().st_size <= WHOLE_BYTES:
            table = read_table(path, part)
            total = table.rows
        elif text:
            table, total = _sampled_text(path, head or _head(path, part)), None
        else:
            table, total = head or _head(path, part), None
        found = {}
        for key in keys:
            value, count = rms(table.column(key, "reference"))
            if value == 0 and total is None:  # "zero everywhere" is said only of what was all read
                whole = read_table(path, part)
                value, count = rms(whole.column(key, "reference"))
                table, total = whole, whole.rows
            found[str(key)] = Scale(value, count, total)
        return found
    except (OracleInputError, OSError, ValueError, TypeError, KeyError, IndexError):
        return {}


def _largest_rms(blocks) -> tuple[float, int]:
    """(0, how many values) when every block is zero, else the first non-zero block's RMS: all it must tell is
    whether anything is there (the sample said nothing)."""
    count = 0
    for block in blocks:
        value, seen = rms(block)
        count += seen
        if value > 0:
            return value, count
    return 0.0, count


def _head(path: Path, part: str | None) -> Table:
    """The first rows of a big binary table, as init's survey read them."""
    from nightshift.supervisor.verify.oracle.peek import peek_file

    found = next((d.sample for d in peek_file(path) if d.part == part and d.sample is not None), None)
    if found is None:
        raise OracleInputError(f"{path}: no table {part!r}", kind="unknown part")
    return found


def _sampled_text(path: Path, head: Table) -> Table:
    """A big text table's first rows (``head``, read as the oracle reads it) with rows from ``TEXT_SLABS`` places of
    the file: each slab starts at the next whole line; a slab with a line that is not a row of numbers of the
    table's width is left out (the oracle names such a line)."""
    width = len(head.columns)
    size = path.stat().st_size
    delimiter = _delimiter_for(path, "")  # by the file's suffix; a comma or tab in the rows is found below
    blocks = []
    with open(path, "rb") as handle:
        for start in np.linspace(size // TEXT_SLABS, size - TEXT_SLAB_BYTES, TEXT_SLABS - 1).astype(int):
            handle.seek(max(0, int(start)))
            lines = handle.read(TEXT_SLAB_BYTES).decode("utf-8", errors="replace").splitlines()[1:-1]
            if delimiter is None:
                delimiter = next((_delimiter_for(path, line) for line in lines if line.strip()), None)
            block = _slab_rows(lines, delimiter, width)
            if block is not None:
                blocks.append(block)
    if head.rows:  # the first rows count as one slab among the others, not as a tenth of the sample
        per_slab = max(1, sum(len(block) for block in blocks) // max(len(blocks), 1))
        blocks.insert(0, np.column_stack(head.columns)[:per_slab])
    data = np.concatenate(blocks) if blocks else np.empty((0, width))
    return Table(str(path), list(head.names), [data[:, i] for i in range(width)])


def _slab_rows(lines: list[str], delimiter: str | None, width: int) -> np.ndarray | None:
    """The rows of a slab of whole lines, or None when a cell is no number (the oracle names that line). Whole
    rows of numbers, the usual slab, are converted in one call; comments, blank or ragged lines one by one."""
    if delimiter is None and not any("#" in line for line in lines):
        cells = " ".join(lines).split()
        if len(cells) == width * sum(1 for line in lines if line.strip()):
            try:
                return np.array(cells, dtype=float).reshape(-1, width)
            except ValueError:
                return None
    bodies = (line.split("#", 1)[0].strip() for line in lines)
    rows = [cells for cells in (_split(b, delimiter) for b in bodies if b) if len(cells) == width]
    try:
        return np.array(rows, dtype=float).reshape(len(rows), width)
    except ValueError:
        return None
