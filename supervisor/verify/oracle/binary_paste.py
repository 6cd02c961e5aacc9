"""Reference values pasted as binary numbers: a file (or a blob of the agent's commits) that stores ``run_length``
of a reference's values in a row as float64 words, or as float32 words where the reference's values are float32
(a raw dump, ``ndarray.tofile``, a pickle, ``struct.pack``, an uncompressed array of any container), at any byte
alignment. The text scan (embedded.py) cannot see these: its files are parsed as printed numbers.

A word counts when it is one of the reference's informative values (evidence.informative: not zero, not a small
integer, finite) bit for bit, and a coordinate a comparison gives the solver (its ``x`` column, an evenly spaced
axis) is left out, so an input mesh is no finding. Compressed data is not seen: the held-out exam is the proof there.

Vectorised: each reference's words are sorted once (cached by the reference's stamp); a file is one searchsorted
per alignment. Files are cached by their stamp (a blob by its id) and the words' digest.
"""
from __future__ import annotations

import hashlib

import numpy as np

from nightshift.supervisor.verify.oracle.evidence import informative, is_axis
from nightshift.supervisor.verify.oracle.table import Table

_WORDS: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # (table path, stamp, left out) -> (float64, float32) words
_FOUND: dict[tuple, tuple[int, int] | None] = {}  # (file key, words digest, run_length) -> first run


def reference_words(table: Table, stamp: tuple[int, int], given: set[str]) -> tuple[np.ndarray, np.ndarray]:
    """The sorted float64 and float32 bit patterns of the reference's informative values; ``given``: column
    names the solver is given (the comparisons' x), left out with every evenly spaced axis."""
    key = (table.path, stamp, tuple(sorted(given)))
    if key in _WORDS:
        return _WORDS[key]
    kept = [np.asarray(c, dtype=np.float64).reshape(-1) for name, c in zip(table.names, table.columns)
            if name not in given and not is_axis(c)]
    values = informative(np.concatenate(kept)) if kept else np.empty(0)
    as32 = values.astype(np.float32)
    exact = as32.astype(np.float64) == values
    words = (np.unique(values.view(np.uint64)), np.unique(as32[exact].view(np.uint32)))
    if len(_WORDS) > 64:
        _WORDS.clear()
    _WORDS[key] = words
    return words


def merge(words: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, str]:
    """Every reference's words together, and their digest (the cache key of a file's answer)."""
    w64 = np.unique(np.concatenate([w[0] for w in words])) if words else np.empty(0, np.uint64)
    w32 = np.unique(np.concatenate([w[1] for w in words])) if words else np.empty(0, np.uint32)
    return w64, w32, hashlib.sha1(w64.tobytes() + w32.tobytes()).hexdigest()


def _first_run(hit: np.ndarray, length: int) -> tuple[int, int] | None:
    if len(hit) < length or not hit.any():
        return None
    edges = np.flatnonzero(np.diff(np.concatenate(([0], hit.view(np.int8), [0]))))
    starts, ends = edges[0::2], edges[1::2]
    long = np.flatnonzero(ends - starts >= length)
    return (int(starts[long[0]]), int(ends[long[0]] - starts[long[0]])) if len(long) else None


def first_binary_run(blob: bytes, w64: np.ndarray, w32: np.ndarray, run_length: int) -> tuple[int, int] | None:
    """(byte offset, words in a row) of the first run of at least ``run_length`` reference words, or None."""
    buf = np.frombuffer(blob, dtype=np.uint8)
    best = None
    for size, words, dtype in ((8, w64, np.uint64), (4, w32, np.uint32)):
        if not len(words) or run_length <= 0:
            continue
        for shift in range(size):
            n = (len(buf) - shift) // size
            if n < run_length:
                continue
            view = buf[shift:shift + n * size].view(dtype)
            where = np.minimum(np.searchsorted(words, view), len(words) - 1)
            found = _first_run(words[where] == view, run_length)
            if found and (best is None or shift + found[0] * size < best[0]):
                best = (shift + found[0] * size, found[1])
    return best


def cached_run(key: tuple, blob_of, w64: np.ndarray, w32: np.ndarray, digest: str,
               run_length: int) -> tuple[int, int] | None:
    """first_binary_run of the file ``key`` names (its name and stamp, or a blob id), read by ``blob_of()`` only
    when its answer is not known for these words."""
    full = (key, digest, run_length)
    if full not in _FOUND:
        blob = blob_of()
        if len(_FOUND) > 4096:
            _FOUND.clear()
        _FOUND[full] = first_binary_run(blob, w64, w32, run_length) if blob else None
    return _FOUND[full]
