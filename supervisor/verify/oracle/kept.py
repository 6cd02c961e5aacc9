"""The references the agent kept: every place in the workspace where a reference's content is within the solver's
reach although the reference itself is not (a file's bytes, a container's dataset, a blob in the agent's commits).
One walk of the workspace serves the three (stash.py, stash_data.py, committed.py); this module names each
reference for them (a held-out one only as "a held-out reference") and says what is skipped: the references in
their own places and the candidates the oracle compares (an honest solver's output may equal its reference).

The scan runs just before the oracle command (check.py): the command cannot read a reference, so whatever it could
copy from was in the workspace then, and a stash the solver reads and deletes is still seen. A file the last
oracle command run in the namespace wrote (a checkpoint equal to the final output, bit for bit) was computed, not
kept: its inode changed within that command's window and not since (``window``: ctime, which no process can set
back), so it is not a finding.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.verify.oracle.committed import committed_copies
from nightshift.supervisor.verify.oracle.integrity import _read_json, _write_json
from nightshift.supervisor.verify.oracle.readers import split_part
from nightshift.supervisor.verify.oracle.stash import digests, stashed_copies, walk
from nightshift.supervisor.verify.oracle.stash_data import CONTAINERS, TEXT_TABLES, dataset_copies

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import OracleConfig

HELD_OUT = "a held-out reference"
WINDOW = "oracle-window.json"  # in the run's reference store: the last sealed command's (start, end) in ns


@dataclass
class CopyCheck:
    findings: list[str] = field(default_factory=list)  # each fails the verdict, with what to do instead
    notes: list[str] = field(default_factory=list)  # what the scan could not look at
    seconds: float = 0.0


def _inside(workspace: Path, path: Path) -> str | None:
    try:
        return str(path.resolve().relative_to(workspace.resolve()))
    except (ValueError, OSError):
        return None


def _suffix(rel: str) -> str:
    """The suffix of a workspace-relative path, lower case (pathlib's is a tenth of the scan at 5,000 files)."""
    name = rel.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def _like_a_table(rel: str, size: int, table_sizes: list[int]) -> bool:
    """A text file that may be a reference table printed again (other spacing, digits, a line more): named like
    data and within a factor of 4 of a text reference's size. Source code is the embedded scan's."""
    return _suffix(rel) in TEXT_TABLES and any(s / 4 <= size <= 4 * s for s in table_sizes)


def window(store: Path | None) -> tuple[int, int] | None:
    """The last oracle command run in the namespace, as (start, end) ns, from the run's store (None: none known;
    without a store, `nightshift compare`, one process a call, nothing is kept)."""
    found = _read_json(Path(store) / WINDOW) if store is not None else None
    if isinstance(found, list) and len(found) == 2:  # as an earlier version wrote it
        found = {"began": found[0], "ended": found[1]}
    try:
        return int(found["began"]), int(found["ended"])
    except (TypeError, KeyError, ValueError):
        return None


def remember_window(store: Path | None, began: int, ended: int) -> None:
    """Keep this sealed command's window in the run's store (atomic, private), for the next verdict, in this
    process or a supervisor started again."""
    if store is not None and Path(store).is_dir():
        _write_json(Path(store) / WINDOW, {"began": began, "ended": ended})


def kept_copies(cfg: OracleConfig, workspace: Path, refs: dict[str, Path], base: str | None,
                computed: tuple[int, int] | None = None) -> CopyCheck:
    """``refs``: each comparison's reference file as the oracle reads it (check.reference_files); ``base``: the run's
    first commit, or None outside a run (then git history is not looked at); ``computed``: ``window``'s answer."""
    started = time.perf_counter()
    found = CopyCheck()
    skip = {rel for comp in cfg.compare
            for rel in [_inside(workspace, workspace / split_part(comp.candidate)[0])] if rel}
    files: dict[Path, str] = {}  # reference file -> its label
    parts: list[tuple[str, Path, str | None, bool, object]] = []
    for comp in cfg.compare:
        path = refs.get(comp.name)
        if path is None:
            continue
        label = HELD_OUT if comp.heldout else split_part(comp.reference)[0]
        files.setdefault(path, label)
        parts.append((label, path, split_part(comp.reference)[1], comp.heldout, comp.x))
        rel = None if comp.heldout else _inside(workspace, path)
        skip |= {rel} if rel else set()
    tree = walk(workspace)
    if computed:  # written by the last sealed oracle command and untouched since: its output, not a copy
        tree.files = {rel: st for rel, st in tree.files.items() if not computed[0] <= st.st_ctime_ns <= computed[1]}
    sizes = {st.st_size for rel, st in tree.files.items() if rel not in skip}
    sums = []  # a reference is hashed only when a file of its size is here, or git history is to be searched
    tables = []  # the sizes of the text references (a table printed again is near one of them)
    for path, label in files.items():
        try:
            st = path.stat()
            if path.suffix.lower() not in CONTAINERS:
                tables.append(st.st_size)
            if st.st_size in sizes or base:
                sums.append((label, st.st_size, *digests(path, st, workspace if _inside(workspace, path) else None)))
        except OSError:
            continue  # a missing reference is the comparison's finding
    stashed, notes, named = stashed_copies(workspace, tree, [(label, size, sha) for label, size, sha, _ in sums],
                                           skip)
    left = skip | named
    lo, hi = (min(tables) / 4, max(tables) * 4) if tables else (1, 0)  # a size no text table of ours is near
    containers = [rel for rel, st in tree.files.items() if rel not in left and (
        rel.lower().endswith(CONTAINERS) or lo <= st.st_size <= hi and _like_a_table(rel, st.st_size, tables))]
    held, more = dataset_copies(workspace, containers, parts)
    committed, git_notes = committed_copies(workspace, base, [(label, blob) for label, _, _, blob in sums],
                                            skip | named)
    found.findings = stashed + held + committed
    found.notes = notes + more + git_notes
    found.seconds = time.perf_counter() - started
    return found
