"""Answers copied instead of computed: a candidate equal to its reference at every point (to the last printed
digit), and a file of the workspace that holds a run of a reference's values at full printed precision (a
literal array pasted from the reference into the solver). Each is a finding with what to do instead.
"""
from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

from supervisor.config.oracle import CompareConfig
from supervisor.verify.oracle.readers import split_part

NUMBER = re.compile(rb"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
MIN_DIGITS = 6  # a value with fewer significant digits ("1", "0.5") is too common to say it was copied
MAX_FILE = 5 * 1024 * 1024
MAX_REFERENCE = 64 * 1024 * 1024
INSTEAD = "produce it from the solver; the references are not readable while the oracle runs"


def copy_findings(entries: list[CompareConfig], results: list[dict], workspace: Path,
                  refs: dict[str, Path] | None = None, run_length: int = 20) -> list[str]:
    """The findings for this verdict; ``refs`` maps a comparison's name to the reference file it was read from."""
    findings = []
    by_name = {c.name: c for c in entries}
    for entry in results:
        comp = by_name.get(entry["name"])
        if comp is None or comp.allow_exact or entry.get("error") or entry.get("ratio") != 0:
            continue
        what = f"held-out reference {comp.name!r}" if comp.heldout else comp.reference
        findings.append(f"{comp.candidate} is a copy of {what}: every compared value equals it to the last "
                        f"digit; {INSTEAD} (an analytic reference a solver can hit exactly: allow_exact = true)")
    if refs and run_length:
        findings += embedded_values(workspace, refs, {split_part(c.candidate)[0] for c in entries}, run_length)
    return findings


def _key(token: bytes) -> str | None:
    digits = re.sub(rb"[eE].*$", b"", token).lstrip(b"+-").replace(b".", b"").lstrip(b"0")
    if len(digits) < MIN_DIGITS:
        return None
    return repr(float(token))


def _sequences(path: Path) -> list[list[str | None]]:
    """The reference's values in file order, and column by column (a pasted column is every k-th value)."""
    try:
        with open(path, "rb") as fh:
            blob = fh.read(MAX_REFERENCE)
    except OSError:
        return []
    rows = [[_key(t) for t in NUMBER.findall(line)] for line in blob.splitlines() if not line.lstrip().startswith(b"#")]
    flat = [k for row in rows for k in row]
    width = max((len(r) for r in rows), default=0)
    columns = [[r[i] for r in rows if len(r) > i] for i in range(width)] if width > 1 else []
    return [flat] + columns


def _tracked(workspace: Path) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=workspace, capture_output=True)
    if out.returncode != 0:
        return []
    return [workspace / name.decode("utf-8", "replace") for name in out.stdout.split(b"\0") if name]


def _stamp(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError:
        return str(path), -1, -1
    return str(path), st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=2)
def _reference_index(stamps: tuple[tuple[str, int, int], ...]) -> tuple[list, dict[str, list[tuple[int, int]]]]:
    """The references' values and where each occurs, built once per set of reference files (seconds for a large
    table) and kept while they are unchanged: the supervisor asks at every stop, and references do not change."""
    sequences = [seq for path, _size, _mtime in stamps for seq in _sequences(Path(path))]
    index: dict[str, list[tuple[int, int]]] = {}
    for sid, seq in enumerate(sequences):
        for pos, key in enumerate(seq):
            if key is not None and len(index.setdefault(key, [])) < 50:
                index[key].append((sid, pos))
    return sequences, index


def embedded_values(workspace: Path, refs: dict[str, Path], candidates: set[str], run_length: int) -> list[str]:
    sequences, index = _reference_index(tuple(_stamp(p) for p in refs.values()))
    if not index:
        return []
    skip = {p.resolve() for p in refs.values()} | {(workspace / c).resolve() for c in candidates}
    findings = []
    for path in _tracked(workspace):
        found = _scan(path, workspace, sequences, index, run_length) if path.resolve() not in skip else None
        if found:
            findings.append(found)
    return findings


def _scan(path: Path, workspace: Path, sequences, index, run_length: int) -> str | None:
    rel = path.relative_to(workspace)
    if rel.parts and rel.parts[0] in (".nightshift", ".git") or not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_FILE:
            return None
        blob = path.read_bytes()
    except OSError:
        return None
    if b"\0" in blob[:8192]:
        return None
    tokens = [(m.start(), _key(m.group())) for m in NUMBER.finditer(blob)]
    keys = [k for _, k in tokens]
    i = 0
    while i < len(keys):
        best = 0
        for sid, pos in index.get(keys[i], []) if keys[i] else []:
            seq, n = sequences[sid], 0
            while i + n < len(keys) and pos + n < len(seq) and keys[i + n] is not None and keys[i + n] == seq[pos + n]:
                n += 1
            best = max(best, n)
        if best >= run_length:
            line = blob.count(b"\n", 0, tokens[i][0]) + 1
            return (f"{rel}:{line} holds {best} of a reference's values in a row at full printed precision: the "
                    f"answers were pasted into the code; {INSTEAD}")
        i += max(best, 1)
    return None
