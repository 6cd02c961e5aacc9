"""Reference values pasted into the workspace: a file that holds ``run_length`` of a reference's values in a row,
each at full printed precision (at least ``MIN_DIGITS`` significant digits), in file order or down a column.

Vectorised, and the work goes the cheap way round: the workspace's files are small (source code), the references
may be millions of values. So the files are read first, and their numbers become a short sorted array ``F``;
each reference (the table the comparison already parsed, not a second read) is then one pass of numpy: which of
its values are in ``F`` (a hash bitmap, then an exact sorted search for the few that pass), and where those hits
make a run of ``run_length`` in a column or in row order. Only such runs (none, unless something was pasted) are
matched against the files, window by window, with a rolling hash confirmed value by value. A run is caught
wherever it starts: the scan has no cap on how often a value may occur and no greedy skipping.

A file's number counts when it is written with at least ``MIN_DIGITS`` significant digits and equals a reference
value as a double (``1.2345678e-05`` and ``12.345678E-6`` are one number). The reference is read as the numbers
it holds, not as text, so a reference that prints a value with fewer digits than the file does ("2" against
"2.000000") still matches it: a run of 20 such values in a row is as much a paste.

Cached while nothing changed: a file's numbers by its (size, mtime), a reference's runs by its (size, mtime)
and the files' numbers, so a supervisor asking at every stop pays a few milliseconds.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.verify.oracle.evidence import sorted_unique
from nightshift.supervisor.verify.oracle.table import Table

NUMBER = re.compile(rb"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
MIN_DIGITS = 6  # a value with fewer significant digits ("1", "0.5") is too common to say it was copied
MAX_FILE = 5 * 1024 * 1024
BITMAP_BITS = 20  # a 1 MB bitmap of the files' values: the exact search sees about |F| / 2**20 of the rest
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: the rolling hash is a bijection of each window's last id
_FILES: dict[str, tuple[tuple[int, int], np.ndarray, np.ndarray]] = {}  # path -> (stamp, offsets, values)
_RUNS: dict[tuple, np.ndarray] = {}  # (reference stamp, digest of F, run_length) -> ids of its runs


def stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return -1, -1
    return st.st_size, st.st_mtime_ns


def significant(token: bytes) -> bool:
    digits = re.sub(rb"[eE].*$", b"", token).lstrip(b"+-").replace(b".", b"").lstrip(b"0")
    return len(digits) >= MIN_DIGITS


def file_numbers(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """(byte offset, value) of every number in a text file, NaN where it has too few digits to count; None for a
    file the scan skips (too large, binary, unreadable)."""
    key = stamp(path)
    kept = _FILES.get(str(path))
    if kept and kept[0] == key:
        return kept[1], kept[2]
    if key[0] < 0 or key[0] > MAX_FILE:
        return None
    try:
        blob = untrusted.read_leaf(path)  # a symlink listed by git is not followed, a FIFO never opened
    except OSError:
        return None
    found = blob_numbers(blob)
    if found is None:
        return None
    offsets, values = found
    if len(_FILES) > 4096:  # a workspace that churns through files: forget the old ones
        _FILES.clear()
    _FILES[str(path)] = (key, offsets, values)
    return offsets, values


def blob_numbers(blob: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """file_numbers of bytes already read (a blob of the agent's commits); None for a binary one."""
    if b"\0" in blob[:8192] or len(blob) > MAX_FILE:
        return None
    found = [(m.start(), float(m.group()) if significant(m.group()) else np.nan) for m in NUMBER.finditer(blob)]
    return np.array([f[0] for f in found], dtype=np.int64), np.array([f[1] for f in found], dtype=np.float64)


@dataclass
class Scan:
    """One verdict's scan: made from the workspace's files, fed each reference table as the comparisons read it
    (``take``), asked for its findings at the end. ``seconds`` is the time it cost, for the report."""
    root: Path  # the workspace
    files: dict[str, tuple[np.ndarray, np.ndarray]]  # path relative to root -> (offsets, values)
    run_length: int
    parts: dict[str, str | None] = field(default_factory=dict)  # comparison -> the part of a container it reads
    seconds: float = 0.0
    history: dict[str, str] = field(default_factory=dict)  # of files: the agent's commits' blobs (pasted_history)
    binary: dict[str, tuple] = field(default_factory=dict)  # binary files and blobs: name -> cache key (binary_paste)
    given: set[str] = field(default_factory=set)  # the comparisons' x columns: the solver's input, not a paste
    words: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # the references' binary words
    worded: set[str] = field(default_factory=set)  # the tables whose words are in ``words``
    values: np.ndarray = field(init=False)  # F: every counted value of the files, sorted, unique
    runs: list[np.ndarray] = field(default_factory=list)  # ids (into F) of each reference's runs, -1 between

    def __post_init__(self) -> None:
        started = time.perf_counter()
        every = [v[~np.isnan(v)] for _, v in self.files.values()]
        self.values = sorted_unique(np.concatenate(every)) if every else np.empty(0)
        self._digest = hashlib.sha1(self.values.tobytes()).hexdigest()
        self._bitmap = np.zeros(1 << BITMAP_BITS, dtype=bool)
        self._bitmap[_bucket(self.values)] = True
        self._seen: set[str] = set()
        self._windows: tuple | None = None
        self.seconds += time.perf_counter() - started

    def cached(self, path: Path, part: str | None = None) -> bool:
        """True when this reference's runs are already known (taken, or cached from an earlier verdict)."""
        name = str(path) if part is None else f"{path}:{part}"  # what the readers name the table (Table.path)
        if not len(self.values) or name in self._seen:
            return True
        runs = _RUNS.get((name, stamp(path), self._digest, self.run_length))
        if runs is not None:
            self._seen.add(name)
            self.runs.append(runs)
        return runs is not None

    def take(self, path: Path, table: Table) -> None:
        """The runs of this reference's values that are all in F, down each column and in row order; ``path`` is
        the file ``table`` was read from (a container's part is in ``table.path``)."""
        part = table.path[len(str(path)) + 1:] or None if table.path.startswith(f"{path}:") else None
        if self.binary and table.path not in self.worded:  # only where a binary file may hold them
            started = time.perf_counter()
            from nightshift.supervisor.verify.oracle.binary_paste import reference_words
            self.words.append(reference_words(table, stamp(path), self.given))
            self.worded.add(table.path)
            self.seconds += time.perf_counter() - started
        if self.cached(path, part):
            return
        started = time.perf_counter()
        columns = [np.asarray(c, dtype=np.float64) for c in table.columns]
        hits = [self._hits(c) for c in columns]
        counts = [int(np.count_nonzero(h)) for h in hits]  # fewer hits than a run: no run (the usual case)
        pieces = [self._ids(c, s, e) for c, h, n in zip(columns, hits, counts) if n >= self.run_length
                  for s, e in _runs(h, self.run_length)]
        if len(columns) > 1 and sum(counts) >= self.run_length:
            flat = np.column_stack(hits).ravel()  # row order: the file's order of values
            for s, e in _runs(flat, self.run_length):
                rows = np.column_stack([c[s // len(columns): (e - 1) // len(columns) + 1] for c in columns]).ravel()
                first = s - (s // len(columns)) * len(columns)
                pieces.append(self._ids(rows, first, first + e - s))
        runs = np.concatenate([np.append(p, -1) for p in pieces]) if pieces else np.empty(0, dtype=np.int64)
        if len(_RUNS) > 64:
            _RUNS.clear()
        _RUNS[(table.path, stamp(path), self._digest, self.run_length)] = runs
        self._seen.add(table.path)
        self.runs.append(runs)
        self.seconds += time.perf_counter() - started

    def _hits(self, column: np.ndarray) -> np.ndarray:
        maybe = self._bitmap[_bucket(column)]
        if not maybe.any():
            return maybe
        at = np.flatnonzero(maybe)
        values = column[at]
        where = np.minimum(np.searchsorted(self.values, values), len(self.values) - 1)
        maybe[at] = self.values[where] == values
        return maybe

    def _ids(self, column: np.ndarray, start: int, end: int) -> np.ndarray:
        return np.searchsorted(self.values, column[start:end]).astype(np.int64)

    def _known(self, runs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The references' runs end to end, their windows' hashes sorted, and where each window starts; made once
        per verdict (every file is matched against the same)."""
        if self._windows is None or self._windows[0] != len(runs):
            reference = np.concatenate(runs)
            ref_hash, ref_ok = _windows(reference, self.run_length)
            ref_at = np.flatnonzero(ref_ok)
            order = np.argsort(ref_hash[ref_at], kind="stable")
            self._windows = (len(runs), reference, ref_hash[ref_at][order], ref_at[order])
        return self._windows[1:]

    def first_run(self, rel: str) -> tuple[int, int] | None:
        """(byte offset, length) of the first place in this file where run_length values in a row are a
        reference's, with the length of that run; None when there is none."""
        started = time.perf_counter()
        try:
            runs = [r for r in self.runs if len(r)]
            if not runs or not self.run_length:
                return None
            offsets, values = self.files[rel]
            ids = _file_ids(values, self.values)
            reference, known, known_at = self._known(runs)
            file_hash, file_ok = _windows(ids, self.run_length)
            for i in np.flatnonzero(file_ok & np.isin(file_hash, known)):
                lo, hi = np.searchsorted(known, file_hash[i], "left"), np.searchsorted(known, file_hash[i], "right")
                best = max(_common(ids[i:], reference[j:]) for j in known_at[lo:min(hi, lo + 50)])
                if best >= self.run_length:  # a hash collision does not count: the values are compared
                    return int(offsets[i]), best
            return None
        finally:
            self.seconds += time.perf_counter() - started


def _bucket(values: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    out = bits >> np.uint64(32)  # high and low halves mixed: integers have low bits of zero, smooth data
    out ^= bits  # shares its high bits
    out &= np.uint64((1 << BITMAP_BITS) - 1)
    return out


def _runs(mask: np.ndarray, length: int) -> list[tuple[int, int]]:
    """[start, end) of every stretch of True at least ``length`` long."""
    if length <= 0 or len(mask) < length or not mask.any():
        return []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    starts, ends = edges[0::2], edges[1::2]
    long = ends - starts >= length
    return list(zip(starts[long].tolist(), ends[long].tolist()))


def _file_ids(values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Each file number's index in ``known``, -1 for one that is not counted."""
    where = np.minimum(np.searchsorted(known, values), max(len(known) - 1, 0))
    ids = where.astype(np.int64)
    ids[np.isnan(values) | (known[where] != values)] = -1
    return ids


def _windows(ids: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """A hash of every ``length`` ids in a row, and whether that window holds no -1."""
    n = len(ids) - length + 1
    if n <= 0:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=bool)
    h = np.zeros(n, dtype=np.uint64)
    shifted = (ids + 1).astype(np.uint64)
    for k in range(length):  # uint64 arithmetic wraps: the hash is modulo 2**64
        h *= HASH_BASE
        h += shifted[k:k + n]
    bad = np.concatenate(([0], np.cumsum(ids < 0)))
    return h, (bad[length:] - bad[:n]) == 0


def _common(a: np.ndarray, b: np.ndarray) -> int:
    """How many values in a row, from the first, are the same counted number in both."""
    n = min(len(a), len(b))
    same = (a[:n] == b[:n]) & (a[:n] >= 0)
    return int(np.argmin(same)) if not same.all() else n
