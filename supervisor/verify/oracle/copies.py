"""Answers copied instead of computed: a candidate equal to its reference at every point (to the last printed
digit), and a file of the workspace that holds a run of a reference's values at full printed precision (a
literal array pasted from the reference into the solver). Each is a finding with what to do instead.

The second is ``embedded.Scan``'s: ``start_scan`` reads the workspace's files before the comparisons, each
comparison hands it the reference table it parsed, and ``copy_findings`` reads any reference no comparison did.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from supervisor.gitguard import run_git
from supervisor.run import untrusted
from supervisor.verify.oracle.embedded import Scan, file_numbers
from supervisor.verify.oracle.evidence import COPY_MIN_DISTINCT
from supervisor.verify.oracle.readers import read_table, split_part

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from supervisor.config.oracle import CompareConfig

INSTEAD = "produce it from the solver; the references are not readable while the oracle runs"


def start_scan(workspace: Path, entries: list[CompareConfig], refs: dict[str, Path], run_length: int,
               compares: list[CompareConfig] | None = None) -> Scan:
    """The scan of this verdict, over every file of the workspace but the references and the candidates of
    ``entries`` (the comparisons this verdict makes); ``refs``: every comparison's reference file by name, and
    ``compares`` every comparison (where a reference is a container, the part each reads)."""
    started = time.perf_counter()
    skip = {p.resolve() for p in refs.values()} | {(workspace / split_part(c.candidate)[0]).resolve() for c in entries}
    files = {}
    for path in _tracked(workspace) if refs and run_length else []:
        rel = path.relative_to(workspace)
        if rel.parts and rel.parts[0] in (".nightshift", ".git") or not path.is_file() or path.resolve() in skip:
            continue
        found = file_numbers(path)
        if found is not None and len(found[0]):
            files[str(rel)] = found
    parts = {c.name: split_part(c.reference)[1] for c in compares or entries}
    return Scan(workspace, files, run_length, parts, seconds=time.perf_counter() - started)


def copy_findings(entries: list[CompareConfig], results: list[dict], workspace: Path, scan: Scan | None = None,
                  refs: dict[str, Path] | None = None) -> list[str]:
    """The findings for this verdict; ``refs`` maps each comparison's name to the reference file it is read from."""
    findings = []
    by_name = {c.name: c for c in entries}
    for entry in results:
        comp = by_name.get(entry["name"])
        if comp is None or comp.allow_exact or entry.get("error") or entry.get("ratio") != 0:
            continue
        if entry.get("distinct", COPY_MIN_DISTINCT) < COPY_MIN_DISTINCT:
            continue  # zeros, a constant, small integers, a given axis: an honest solver hits them exactly
        what = f"held-out reference {comp.name!r}" if comp.heldout else comp.reference
        findings.append(f"{comp.candidate} is a copy of {what}: every compared value equals it to the last "
                        f"digit (at least {entry.get('distinct', COPY_MIN_DISTINCT)} distinct, non-trivial values); "
                        f"{INSTEAD} (an analytic reference a solver can hit exactly: allow_exact = true)")
    if scan is not None and refs:
        findings += embedded_findings(scan, refs)
    return findings


def embedded_findings(scan: Scan, refs: dict[str, Path]) -> list[str]:
    for name, path in refs.items():
        part = scan.parts.get(name)
        if not scan.cached(path, part):  # no comparison read it (its candidate was missing, or it is not selected)
            started = time.perf_counter()
            try:
                table = read_table(path, part)
            except Exception:  # noqa: BLE001 - an unreadable reference is the comparison's finding, not the scan's
                continue
            finally:
                scan.seconds += time.perf_counter() - started
            scan.take(path, table)
    findings = []
    for rel in scan.files:
        found = scan.first_run(rel)
        if found:
            at, length = found
            line = _line_of(Path(rel), at, scan)
            findings.append(f"{rel}:{line} holds {length} of a reference's values in a row at full printed "
                            f"precision: the answers were pasted into the code; {INSTEAD}")
    return findings


def _line_of(rel: Path, offset: int, scan: Scan) -> int:
    try:
        return untrusted.read_bytes(scan.root, rel, offset).count(b"\n") + 1
    except OSError:
        return 0


def _tracked(workspace: Path) -> list[Path]:
    out = run_git(workspace, "ls-files", "-co", "--exclude-standard", "-z", text=False)
    if out.returncode != 0:
        return []
    return [workspace / name.decode("utf-8", "replace") for name in out.stdout.split(b"\0") if name]
