"""What `nightshift init` measures of a reference data set for the absolute floor it derives when the goal states
none (roundoff.py says which values are zero at the data's precision and why): each field, and each compared column
of a table, read with the oracle's own readers.

init reads headers and samples, never a whole folder of gigabytes (bench/bench_init.py): a field is measured over
at most ``SAMPLE_VALUES`` values (``SLABS`` slabs of its first axis spread over it, where it is bigger); a table file
up to ``WHOLE_BYTES`` is read whole with the oracle's reader; a bigger text table over its first rows and rows from
``SLABS`` places of the file, a bigger binary one over the first rows init's survey read (peek.py). The comment
init writes says which.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nightshift.supervisor.verify.oracle.roundoff import Floor, measure, precision
from nightshift.supervisor.verify.oracle.field import open_field
from nightshift.supervisor.verify.oracle.read_text import _delimiter_for, _split
from nightshift.supervisor.verify.oracle.readers import read_table
from nightshift.supervisor.verify.oracle.table import OracleInputError, Table

SAMPLE_VALUES = 1 << 14
SLABS = 16
WHOLE_BYTES = 1 << 20  # a table file up to this size is read whole (a few ms); a bigger one is sampled
TEXT_SLABS = 5
TEXT_SLAB_BYTES = 1 << 13  # ~90 rows of a CLASS table a slab: ~450 rows in all with the head


Scale = Floor  # what init measured of one field or column


def _largest(values) -> float:
    flat = np.abs(np.asarray(values, dtype=np.float64).reshape(-1))
    flat = flat[np.isfinite(flat)]
    return float(flat.max()) if flat.size else 0.0


def field_scale(path: Path, part: str | None) -> Floor | None:
    """The floor of the field at ``path[:part]``; None when it is a table or cannot be read (the oracle and
    `nightshift check` say why, in their words)."""
    try:
        with open_field(path, part, "reference") as found:
            if found is None:
                return None
            rows = found.shape[0] if found.shape else 1
            per_row = max(1, found.size // max(rows, 1))
            eps = precision(found.dtype)
            if found.size <= SAMPLE_VALUES:
                slabs = [np.asarray(found.source[()], dtype=np.float64)]
            else:
                take = max(1, SAMPLE_VALUES // SLABS // per_row)
                starts = sorted({int(s) for s in np.linspace(0, rows - take, SLABS)})
                slabs = [np.asarray(found.source[s:s + take], dtype=np.float64) for s in starts]
            sampled = found.size > SAMPLE_VALUES
            floor = measure(slabs, eps, found.size, sampled=sampled)
            if floor.zero and sampled:  # "zero everywhere" is said only of what was all read
                step = max(1, SAMPLE_VALUES * SLABS // per_row)
                floor.largest = max((_largest(found.source[lo:lo + step]) for lo in range(0, rows, step)),
                                    default=0.0)
                if floor.largest > 0:
                    floor.atol, floor.fallback = floor.roundoff, True
            return floor
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
            column = table.column(key, "reference")
            floor = measure([column], precision(column.dtype), total, sampled=total is None, column=True)
            if floor.zero and total is None:  # "zero everywhere" is said only of what was all read
                table = read_table(path, part)
                total = table.rows
                column = table.column(key, "reference")
                floor = measure([column], precision(column.dtype), total, column=True)
            found[str(key)] = floor
        return found
    except (OracleInputError, OSError, ValueError, TypeError, KeyError, IndexError):
        return {}


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
