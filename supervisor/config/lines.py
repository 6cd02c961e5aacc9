"""Which line of a nightshift.toml a validation error is about: the line that writes the key (``rtol = "tight"``), or
for a table the line of its header (``[oracle.x]``), never the header of the table around it.

Each header and each ``key = value`` line is given the full path it writes, with the index of every array of tables
on the way (``[[oracle.compare]]`` twice: ``oracle.compare[1]``); the error's path is matched against them: the line
whose path equals it, else the first line inside it (a table the schema does not know is reported where it starts),
else the deepest line that contains it (an item of a list: the list's key line).
"""
from __future__ import annotations

import re
from typing import Any

_BARE = r"[A-Za-z0-9_-]+"
_PART = rf"(?:{_BARE}|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\[(\[)?\s*({_DOTTED})\s*\]")
_KEY = re.compile(rf"^({_DOTTED})\s*=")


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(_PART, dotted)]


def _written_paths(text: str) -> list[tuple[int, tuple[Any, ...]]]:
    """(line number, the full path it writes) for every header and key line."""
    arrays: dict[tuple[Any, ...], int] = {}  # an array of tables (indexed path) -> its last index
    table: tuple[Any, ...] = ()
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = _HEADER.match(stripped)
        if header:
            path: tuple[Any, ...] = ()
            names = _parts(header.group(2))
            for i, name in enumerate(names):
                path += (name,)
                if i == len(names) - 1 and header.group(1):
                    arrays[path] = arrays.get(path, -1) + 1
                    path += (arrays[path],)
                elif path in arrays:  # [oracle.compare.per_column.x] inside the last [[oracle.compare]]
                    path += (arrays[path],)
            table = path
            out.append((number, table))
            continue
        key = _KEY.match(stripped)
        if key:
            out.append((number, table + tuple(_parts(key.group(1)))))
    return out


def line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """The line an error at ``loc`` (pydantic's path: keys and list indices) is about, or None."""
    loc = tuple(loc)
    written = _written_paths(text)
    for number, path in written:
        if path == loc:
            return number
    for number, path in written:
        if path[: len(loc)] == loc:
            return number
    best, depth = None, 0
    for number, path in written:
        if path and loc[: len(path)] == path and len(path) > depth:
            best, depth = number, len(path)
    return best
