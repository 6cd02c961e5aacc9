"""A numeric table read from any supported file, and the one error type the readers and comparison raise.

``Table`` holds float columns and their names (``None`` for a headerless column); columns are looked up by
name (exact, then case-insensitive) or by 0-based index, and an unknown one names the columns that exist.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class OracleInputError(Exception):
    """Bad input for one comparison (missing file, unknown column, non-numeric cell, ...), as one line.

    ``side`` says whose data the message describes: "candidate", "reference" or "both". For a held-out
    comparison a message about the reference is replaced by its ``kind`` so that no reference detail leaks.
    """

    def __init__(self, message: str, side: str = "both", kind: str = "bad input"):
        super().__init__(message)
        self.side = side
        self.kind = kind


@dataclass
class Table:
    path: str
    names: list[str | None]
    columns: list[np.ndarray]

    def __post_init__(self) -> None:
        lengths = {len(c) for c in self.columns}
        if len(lengths) > 1:
            raise OracleInputError(f"{self.path}: columns have different lengths {sorted(lengths)}",
                                   kind="columns of different lengths")

    @property
    def rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def describe(self) -> str:
        return ", ".join(f"{i}:{n}" if n is not None else str(i) for i, n in enumerate(self.names))

    def index_of(self, key: str | int, side: str) -> int:
        if isinstance(key, int) or (isinstance(key, str) and key.isdigit() and key not in self.names):
            i = int(key)
            if 0 <= i < len(self.columns):
                return i
            raise OracleInputError(f"{self.path}: no column {i} (0-based; it has {len(self.columns)} columns: "
                                   f"{self.describe()})", side, "unknown column")
        exact = [i for i, n in enumerate(self.names) if n == key]
        folded = exact or [i for i, n in enumerate(self.names) if n is not None and n.lower() == key.lower()]
        if len(folded) == 1:
            return folded[0]
        if len(folded) > 1:  # never the first of two: "aerr rerr aerr rerr" are four different columns
            raise OracleInputError(f"{self.path}: the name {key!r} is ambiguous, it heads columns "
                                   f"{', '.join(str(i) for i in folded)} (0-based); name the column by its position "
                                   f"instead (columns = [{folded[0]}, {folded[1]}])", side, "ambiguous column")
        raise OracleInputError(f"{self.path}: no column named {key!r}; it has: {self.describe()}", side,
                               "unknown column")

    def column(self, key: str | int, side: str) -> np.ndarray:
        return np.asarray(self.columns[self.index_of(key, side)], dtype=float)

    def name_of(self, i: int) -> str:
        name = self.names[i]
        return name if name is not None else str(i)


def table_from_array(path: str, array: np.ndarray) -> Table:
    """A Table from a 1-D, 2-D or structured numpy array (columns of a 2-D array are its second axis)."""
    if array.dtype.names:
        names = list(array.dtype.names)
        return Table(path, list(names), [_numeric(path, array[n], n) for n in names])
    array = _numeric(path, array, None)
    if array.ndim == 1:
        return Table(path, [None], [array])
    if array.ndim != 2:
        raise OracleInputError(f"{path}: a {array.ndim}-D array; expected 1-D or 2-D (rows x columns)",
                               kind="wrong shape")
    return Table(path, [None] * array.shape[1], [array[:, i] for i in range(array.shape[1])])


def _numeric(path: str, array: np.ndarray, name: str | None) -> np.ndarray:
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        what = f"column {name!r}" if name else "the array"
        raise OracleInputError(f"{path}: {what} holds {array.dtype} values, not numbers", kind="not numeric")
    return np.asarray(array, dtype=float)
