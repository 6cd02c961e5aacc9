"""Answers copied instead of computed, and exact agreement that is not copying.

The oracle command runs where no reference is readable, so a candidate equal to its reference at every point is
a bit-for-bit reproduction (how regression references are made), not evidence: ``exact_notes`` says so, and
names the held-out exam as what proves the answers were computed. The evidence is what put a reference within
the solver's reach: a copy kept in the workspace or the agent's commits (kept.py), and a file that holds a run of
a reference's values at full printed precision (a literal array pasted into the solver: ``embedded.Scan``, whose
``start_scan`` reads the workspace's files before the comparisons; each comparison hands it the reference table it
parsed, and ``embedded_findings`` reads any reference no comparison did). Only where the candidate was not
computed with the references out of reach (no namespace, no command, a stale candidate kept) is an exact match
still refused (``exact_refusals``), saying why. Each finding says what to do instead.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.gitguard import run_git
from nightshift.supervisor.run import untrusted
from nightshift.supervisor.verify.oracle.binary_paste import cached_run, merge
from nightshift.supervisor.verify.oracle.embedded import MAX_FILE, Scan, file_numbers, stamp
from nightshift.supervisor.verify.oracle.evidence import COPY_MIN_DISTINCT
from nightshift.supervisor.verify.oracle.integrity import heldout_reference, resolve
from nightshift.supervisor.verify.oracle.kept import CopyCheck
from nightshift.supervisor.verify.oracle.pasted_history import (binary_blobs, history_blobs, history_numbers,
                                                                 line_in_blob, read_blob)
from nightshift.supervisor.verify.oracle.readers import read_table, split_part

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import CompareConfig, OracleConfig

INSTEAD = "produce it from the solver; the references are not readable while the oracle runs"


def start_scan(workspace: Path, entries: list[CompareConfig], refs: dict[str, Path], run_length: int,
               compares: list[CompareConfig] | None = None, base: str | None = None,
               computed: list[tuple[int, int]] = ()) -> Scan:
    """The scan of this verdict, over every file of the workspace but the references and the candidates of
    ``entries`` (the comparisons this verdict makes), and every version of a file the agent's commits since
    ``base`` (the run's first commit) held; ``refs``: every comparison's reference file by name, and
    ``compares`` every comparison (where a reference is a container, the part each reads); ``computed``: the
    windows (ns) of sealed oracle commands: a file whose inode changed within one (ctime, which no process can set
    back) and not since is their output (a checkpoint equal to the final output), not a paste (kept.py)."""
    started = time.perf_counter()
    skip = {p.resolve() for p in refs.values()} | {(workspace / split_part(c.candidate)[0]).resolve() for c in entries}
    files, binary = {}, {}
    for path in _tracked(workspace) if refs and run_length else []:
        rel = path.relative_to(workspace)
        if rel.parts and rel.parts[0] in (".nightshift", ".git") or not path.is_file() or path.resolve() in skip:
            continue
        if computed and _written_in(path, computed):
            continue
        found = file_numbers(path)
        if found is not None and len(found[0]):
            files[str(rel)] = found
        elif found is None and 0 < stamp(path)[0] <= MAX_FILE:  # binary (or unreadable: read as nothing)
            binary[str(rel)] = (str(rel), stamp(path))
    history = history_blobs(workspace, base, skip) if refs and run_length else {}
    files.update(history_numbers(workspace, history))
    binary.update({name: blob for name, blob in binary_blobs(history).items()})
    parts = {c.name: split_part(c.reference)[1] for c in compares or entries}
    given = {str(c.x) for c in compares or entries if c.x is not None}
    return Scan(workspace, files, run_length, parts, seconds=time.perf_counter() - started, history=history,
                binary=binary, given=given)


def _written_in(path: Path, windows: list[tuple[int, int]]) -> bool:
    try:
        changed = os.lstat(path).st_ctime_ns
    except OSError:
        return False
    return any(began <= changed <= ended for began, ended in windows)


def reference_files(cfg: OracleConfig, workspace: Path, store: Path | None) -> dict[str, Path]:
    """Each comparison's reference file as the oracle reads it (a held-out one from its private copy)."""
    out = {}
    for comp in cfg.compare:
        path = resolve(workspace, split_part(comp.reference)[0])
        out[comp.name] = heldout_reference(store, comp.name, path)[0] if comp.heldout else path
    return out


def reference_inodes(cfg: OracleConfig, refs: dict[str, Path]) -> dict[tuple[int, int], str]:
    """{(st_dev, st_ino): the reference's label} of every reference file: a candidate that is one of them (a link
    to it) reads the reference's own bytes, so it is refused (sides.opened_candidate)."""
    found = {}
    for comp in cfg.compare:
        try:
            st = os.stat(refs[comp.name])
        except (KeyError, OSError):
            continue  # a missing reference is the comparison's finding
        found[(st.st_dev, st.st_ino)] = "a held-out reference" if comp.heldout else split_part(comp.reference)[0]
    return found


def not_out_of_reach(cfg: OracleConfig, ran: bool, sealed: str, in_turn: bool = False) -> str | None:
    """Why the candidates may not have been computed with every reference out of reach (None: they were): then an
    exact match may still be a copy. ``sealed``: how the command ran (seal.Seal.how); ``in_turn``: the agent's own
    `nightshift compare` inside its turn's namespace, where no namespace nests: the verdict at its stop, where the
    command runs with no reference in reach, decides (exact_notes says so), so nothing is refused here."""
    if not ran:
        return "no oracle command ran, so nothing shows it was computed (set [oracle] command to what writes it)"
    if sealed != "namespace" and in_turn:
        return None
    if sealed != "namespace":
        how = "moved out of the workspace" if sealed == "moved" else "readable"
        return (f"the oracle command ran without nightshift's namespace (the references were {how}, not absent), so "
                "the solver could have read them (install bubblewrap: nightshift doctor)")
    if not cfg.clean_candidates:
        return ("clean_candidates = false, so the candidate may be a file left from before the command (remove "
                "that setting)")
    return None


def copy_check(entries: list[CompareConfig], results: list[dict], scan: Scan | None, refs: dict[str, Path],
               reach: str | None, kept: CopyCheck) -> CopyCheck:
    """This verdict's evidence of copying. ``reach``: not_out_of_reach's answer (an exact match is refused only
    when it is not None); ``kept``: kept_copies' answer, taken before the oracle command ran."""
    found = CopyCheck(exact_refusals(entries, results, reach) if reach else [])
    if scan is not None and refs:
        found.findings += embedded_findings(scan, refs)
    found.findings += kept.findings
    found.notes += kept.notes
    found.seconds = kept.seconds
    return found


def exact_refusals(entries: list[CompareConfig], results: list[dict], reach: str) -> list[str]:
    """An exact match that may be a copy: only where the candidate was not computed with the references out of
    reach (``reach`` says why), and only when the matching values carry information (evidence.py)."""
    findings = []
    by_name = {c.name: c for c in entries}
    for entry in results:
        comp = by_name.get(entry["name"])
        if comp is None or entry.get("error") or entry.get("ratio") != 0:
            continue
        if entry.get("distinct", COPY_MIN_DISTINCT) < COPY_MIN_DISTINCT:
            continue  # zeros, a constant, small integers, a given axis: an honest solver hits them exactly
        what = f"held-out reference {comp.name!r}" if comp.heldout else comp.reference
        findings.append(f"{comp.candidate} may be a copy of {what}: every compared value equals it to the last "
                        f"digit (at least {entry.get('distinct', COPY_MIN_DISTINCT)} distinct, non-trivial values) "
                        f"and {reach}; an exact match counts only when the oracle command computed it with the "
                        "references out of reach")
    return findings


IN_TURN_EXACT = ("matched bit for bit here; whether it was computed with the references out of reach is decided at "
                 "your stop, where the verdict runs the oracle command with no reference in reach")


def exact_notes(shown: list[dict], results: list[dict], evaluated: bool, configured: int,
                in_turn: bool = False, history: bool = False) -> list[str]:
    """What the report, the verdict and `nightshift compare` say about exact agreement computed with the references
    out of reach: each visible comparison that matched bit for bit, and what proves the answers were computed
    (the held-out exam: passed, still to come, or missing). ``shown``: the entries as the agent sees them (a
    held-out one carries only its word, so no figure of it is told here); ``evaluated``: the held-out comparisons
    were evaluated at this verdict; ``configured``: how many the config has (a fast verdict may select none, the
    agent's own compare leaves them out); ``in_turn``: the agent's own look in its turn, where the command did not
    run sealed (IN_TURN_EXACT: its stop decides); ``history``: the command ran in a workspace with git history
    (`check`, a user's `nightshift compare`), which its namespace does not hide: a verdict runs it in a clean
    checkout without one (verify/verdict_tree.py). Marks each such entry ``exact``."""
    exact = [e for e in shown if "result" not in e and not e.get("error") and e.get("ratio") == 0]
    if not exact:
        return []
    for entry in exact:
        entry["exact"] = True  # the report's comparison says it too (`nightshift compare` marks it)
    if in_turn:
        return [IN_TURN_EXACT]
    how = ("with the reference files hidden but the workspace's git history in its reach (each verdict runs it in a "
           "clean checkout without history)" if history else "with the references out of reach")
    lines = [f"{e['name']}: matched {e.get('reference', 'its reference')} bit for bit (every compared value "
             f"equal), computed by the oracle command {how}" for e in exact]
    held = [e for e in results if e.get("heldout")]
    evaluated = evaluated and bool(held) and len(held) == configured
    return lines + [exam_note(configured, evaluated, all(e["passed"] for e in held))]


def exam_note(held: int, evaluated: bool, passed: bool) -> str:
    """What proves an exact match was computed: ``held`` held-out comparisons, ``evaluated`` at this verdict, all
    ``passed``."""
    if not held:
        return ("only a held-out reference proves the answers were computed, not recalled: none is configured "
                "(heldout = true on a comparison whose reference stays outside the workspace)")
    if evaluated and passed:
        return f"the held-out exam passed ({held} comparison(s) the solver never saw): the answers were computed"
    if evaluated:
        return "the held-out exam did not pass: it is what proves the answers were computed"
    return (f"the held-out exam ({held} comparison(s)), evaluated at a claim of done, is what proves the answers "
            "were computed")


def embedded_findings(scan: Scan, refs: dict[str, Path]) -> list[str]:
    for name, path in refs.items():
        part = scan.parts.get(name)
        worded = (str(path) if part is None else f"{path}:{part}") in scan.worded or not scan.binary
        if not scan.cached(path, part) or not worded:  # no comparison read it (its candidate was missing, ...)
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
            path, _, commit = rel.partition(" at ")
            where = f"{path}:{line} in commit {commit} (the agent's history)" if rel in scan.history \
                else f"{rel}:{line}"
            findings.append(f"{where} holds {length} of a reference's values in a row at full printed "
                            f"precision: the answers were pasted into the code; {INSTEAD}")
    return findings + binary_findings(scan)


def binary_findings(scan: Scan) -> list[str]:
    """binary_paste.py over the scan's binary files and blobs."""
    if not scan.binary or not scan.words:
        return []
    started = time.perf_counter()
    w64, w32, digest = merge(scan.words)
    findings = []
    for name, key in scan.binary.items():
        blob_of = (lambda k=key: read_blob(scan.root, k)) if name in scan.history else \
            (lambda n=name: _leaf(scan.root / n))
        found = cached_run(key, blob_of, w64, w32, digest, scan.run_length)
        if found:
            path, _, commit = name.partition(" at ")
            where = f"{path} in commit {commit} (the agent's history)" if name in scan.history else name
            findings.append(f"{where} stores {found[1]} of a reference's values in a row as binary numbers (at byte "
                            f"{found[0]}): the answers were pasted into the workspace; {INSTEAD}")
    scan.seconds += time.perf_counter() - started
    return findings


def _leaf(path: Path) -> bytes:
    try:
        return untrusted.read_leaf(path)
    except OSError:
        return b""


def _line_of(rel: Path, offset: int, scan: Scan) -> int:
    if str(rel) in scan.history:
        return line_in_blob(scan.root, scan.history[str(rel)], offset)
    try:
        return untrusted.read_bytes(scan.root, rel, offset).count(b"\n") + 1
    except OSError:
        return 0


def _tracked(workspace: Path) -> list[Path]:
    out = run_git(workspace, "ls-files", "-co", "--exclude-standard", "-z", text=False)
    if out.returncode != 0:
        return []
    return [workspace / name.decode("utf-8", "replace") for name in out.stdout.split(b"\0") if name]
