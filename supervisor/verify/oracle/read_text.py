"""Text tables: whitespace columns with ``#`` headers (CLASS ``# 1:l 2:TT``, CAMB/plain named headers),
CSV and TSV with a header row, and headerless tables.

Speed matters (a million-row table is ordinary): the body is parsed by pyarrow's multithreaded CSV reader
when the file is single-delimited, else by numpy's C ``loadtxt``. Only when both refuse does a slow Python
pass run, to name the file, line and column of the first bad cell.
"""
from __future__ import annotations

import csv
import ctypes
import re
from pathlib import Path

import numpy as np

from nightshift.supervisor.verify.oracle.table import OracleInputError, Table

CLASS_HEADER = re.compile(r"(\d+):\s*(.*?)\s*(?=\s\d+:|$)")
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eEdD][+-]?\d+)?$|^[+-]?(nan|inf|infinity)$", re.IGNORECASE)
PROBE_BYTES = 1 << 16
STREAM_BYTES = 48 << 20  # above this a table is read batch by batch into its final arrays (memory, not speed)


def _split(line: str, delimiter: str | None) -> list[str]:
    if not delimiter:
        return line.split()
    if '"' not in line:
        return [f.strip() for f in line.split(delimiter)]
    # A quoted name may hold the delimiter (pandas writes "p, total [Pa]" so): csv's own quoting rules
    return [f.strip() for f in next(csv.reader([line], delimiter=delimiter, skipinitialspace=True), [])]


def _delimiter_for(path: Path, first_data: str) -> str | None:
    if path.suffix.lower() == ".csv":
        return ","
    if path.suffix.lower() == ".tsv" or "\t" in first_data.strip():
        return "\t"
    return "," if "," in first_data else None


def _with_units(words: list[str]) -> list[str]:
    """Units in parentheses kept with their name: CAMB's "k/h  P (h^-1 Mpc)^3" names two columns, not four."""
    out: list[str] = []
    for word in words:
        open_parens = out[-1].count("(") - out[-1].count(")") + out[-1].count("[") - out[-1].count("]") \
            if out else 0
        if out and (word[:1] in "([" or open_parens > 0):
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def _header_names(comments: list[str], named_row: str | None, n: int, delimiter: str | None) -> list[str | None]:
    """Column names from a header row, or else from the last ``#`` comment line that names ``n`` columns."""
    if named_row is not None:
        names = _split(named_row, delimiter)
        if len(names) == n:
            return [name or None for name in names]  # pandas leaves its index column's name empty
    for line in reversed(comments):
        body = line.lstrip("#").strip()
        numbered = CLASS_HEADER.findall(body)
        if len(numbered) == n and [int(i) for i, _ in numbered] == list(range(1, n + 1)):
            return [name for _, name in numbered]
        names = _split(body, delimiter)
        if len(names) == n:
            return list(names)
        if delimiter is None and len(names) > n and len(_with_units(names)) == n:
            return _with_units(names)
    return [None] * n


def _probe(path: Path, head: str, complete: bool) -> tuple[int, list[str], str | None, str]:
    """(lines before the data, comment lines, a named header row or None, first data line)."""
    comments: list[str] = []
    named_row = None
    lines = head.splitlines()
    for i, line in enumerate(lines if complete else lines[:-1]):  # the last line of a probe may be cut
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if stripped:
                comments.append(stripped)
            continue
        delimiter = _delimiter_for(path, stripped)
        fields = _split(stripped, delimiter)
        if not all(NUMBER.match(f) for f in fields) and named_row is None and not _has_number(fields):
            named_row = stripped
            continue
        return i, comments, named_row, stripped
    raise OracleInputError(f"{path}: no data rows (only headers or comments in the first "
                           f"{len(head)} characters)", kind="no data")


def _has_number(fields: list[str]) -> bool:
    return any(NUMBER.match(f) for f in fields)


def read_text_table(path: Path) -> Table:
    with open(path, "rb") as handle:
        raw = handle.read(PROBE_BYTES)
    if b"\0" in raw:
        raise OracleInputError(f"{path}: binary data, not a text table (supported: text tables, CSV/TSV, .npy, "
                               ".npz, .h5/.hdf5, .json)", kind="unreadable file")
    skip, comments, named_row, first = _probe(path, raw.decode("utf-8", errors="replace"), len(raw) < PROBE_BYTES)
    delimiter = _delimiter_for(path, first)
    n = len(_split(first, delimiter))
    names = _header_names(comments, named_row, n, delimiter)
    columns = _parse_fast(path, skip, n, delimiter, first)
    if columns is None:
        data = _parse_numpy(path, skip, delimiter)
        if data is not None and data.shape[1] == n:
            columns = [data[:, i] for i in range(n)]
    if columns is None:
        _locate_bad_cell(path, skip, n, delimiter)  # raises with file, line and column
        raise OracleInputError(f"{path}: could not be parsed as a table of numbers", kind="not numeric")
    return Table(str(path), names, columns)


def _parse_fast(path: Path, skip: int, n: int, delimiter: str | None, first: str):
    """pyarrow's CSV reader for single-delimited bodies; None when it does not apply or refuses."""
    if delimiter is None and ("  " in first or first != first.strip()):
        return None  # aligned columns: runs of spaces are one separator, which pyarrow cannot express
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        return None
    names = [f"f{i}" for i in range(n)]
    # The system allocator and 1 MB blocks keep the peak near the size of the parsed numbers (pyarrow's
    # default pool holds on to the text buffers): about 1.7x the numbers instead of 3x, at the same speed.
    pool = pa.system_memory_pool()
    options = dict(memory_pool=pool,
                   read_options=pacsv.ReadOptions(skip_rows=skip, column_names=names, block_size=1 << 20),
                   parse_options=pacsv.ParseOptions(delimiter=delimiter or " ", ignore_empty_lines=True),
                   convert_options=pacsv.ConvertOptions(column_types={c: pa.float64() for c in names},
                                                        null_values=[], strings_can_be_null=False,
                                                        quoted_strings_can_be_null=False))
    try:
        if path.stat().st_size > STREAM_BYTES:
            # A Python file and small blocks: given the path, pyarrow kept about the file's size in buffers.
            options["read_options"].block_size = 1 << 17
            with open(path, "rb") as handle:
                return _stream(path, pacsv.open_csv(handle, **options), n)
        table = pacsv.read_csv(path, **options)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError):
        return None
    columns = []
    while table.num_columns:  # one contiguous copy per column, freeing that column's chunks right away
        columns.append(np.ascontiguousarray(table.column(0).to_numpy()))
        table = table.remove_column(0)
        pool.release_unused()
    if path.stat().st_size > 1 << 24:
        _give_back_freed_memory()
    return columns


def _stream(path: Path, reader, n: int) -> list[np.ndarray]:
    """A big table batch by batch into columns allocated once at their final size (from the file's line count,
    an upper bound): the peak is the numbers plus one batch, not the numbers twice as with a whole arrow table
    converted afterwards. Slower than the threaded whole-table read, so only for files where memory is what
    limits (a comparison of two 100 MB tables stays under twice one file)."""
    lines = 1  # a last line without its newline
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            lines += chunk.count(b"\n")
    columns = [np.empty(lines) for _ in range(n)]
    filled = 0
    with reader:
        for batch in reader:
            rows = batch.num_rows
            if filled + rows > lines:  # cannot happen (a row ends at a newline or at the end): be safe
                raise ValueError("more rows than lines")
            for i in range(n):
                columns[i][filled:filled + rows] = batch.column(i).to_numpy()
            filled += rows
    _give_back_freed_memory()
    return [c[:filled] for c in columns]  # views: the slack is the header and comment lines, a few rows


def _give_back_freed_memory() -> None:
    """glibc keeps what pyarrow's threads freed in per-thread arenas; return it before the next big read."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def _parse_numpy(path: Path, skip: int, delimiter: str | None) -> np.ndarray | None:
    try:
        data = np.loadtxt(path, delimiter=delimiter, comments="#", skiprows=skip, ndmin=2, dtype=float,
                          encoding="utf-8")
    except (ValueError, IndexError):
        return None
    return data


def _locate_bad_cell(path: Path, skip: int, n: int, delimiter: str | None) -> None:
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if number <= skip or not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = _split(line.split("#", 1)[0].strip(), delimiter)
            if len(fields) != n:
                raise OracleInputError(f"{path} line {number}: {len(fields)} columns, expected {n} like the "
                                       "first data row", kind="ragged table")
            for col, cell in enumerate(fields):
                try:
                    float(cell)
                except ValueError:
                    raise OracleInputError(f"{path} line {number}, column {col + 1}: {cell[:40]!r} is not a "
                                           "number", kind="non-numeric cell") from None
