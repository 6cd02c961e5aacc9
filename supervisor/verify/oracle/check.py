"""run_oracle: one verdict's oracle. Restore tampered references, run the command (timeout, output kept),
read and compare every selected entry, write ``oracle.json`` (held-out values redacted) and return the outcome.

It never raises for bad input: a missing file, an unknown column, a timeout or a crash inside one comparison
becomes a failing entry with a one-line message, and the supervisor keeps running.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.verify.oracle.compare import compare_tables
from nightshift.supervisor.verify.oracle.field_compare import field_entry
from nightshift.supervisor.verify.oracle.integrity import _write_json, resolve, restore_references
from nightshift.supervisor.verify.oracle.copies import (copy_check, exact_notes, not_out_of_reach, reference_files,
                                             reference_inodes, start_scan)
from nightshift.supervisor.verify.oracle.embedded import Scan
from nightshift.supervisor.verify.oracle.kept import kept_copies, remember_window, window
from nightshift.supervisor.verify.oracle.exam import Exam, agent_entry, release, write_private
from nightshift.supervisor.verify.oracle.readers import split_part
from nightshift.supervisor.verify.oracle.sides import opened_candidate, read_candidate, read_reference, reference_path
from nightshift.supervisor.verify.oracle.seal import Seal, missing_reference_hint, move_aside, put_back
from nightshift.supervisor.sandbox.boundary import Boundary, boundary_for_oracle
from nightshift.supervisor.sandbox.command import command_env, command_namespace, command_reach, leftover_line
from nightshift.supervisor.sandbox.failure_words import environment_failure
from nightshift.supervisor.verify.oracle.report import pushback_lines, strict_json, summary_line
from nightshift.supervisor.verify.oracle.table import OracleInputError

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import CompareConfig, OracleConfig


@dataclass
class OracleOutcome:
    passed: bool
    summary: str
    pushback: list[str]
    metrics: dict[str, float]  # per comparison: worst error over its tolerance (<= 1 passes; inf: not measured)
    metric: float | None  # the max of metrics, lower is better
    report: dict  # what oracle.json holds (held-out entries as the agent may see them)
    tampered: list[str] = field(default_factory=list)
    heldout: dict | None = None  # the held-out release of this verdict (exam.release), None: nothing released


def run_command(argv: list[str], command: str, workspace: Path, timeout: float, out_dir: Path) -> dict:
    """Run the oracle command (``argv``: it, inside its namespace where one is made) in its own process group;
    stdout and stderr are kept in ``out_dir``."""
    stdout, stderr = out_dir / "command.stdout", out_dir / "command.stderr"
    started = time.monotonic()
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        try:
            proc = subprocess.Popen(argv, cwd=workspace, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=command_env())
        except OSError as exc:
            return {"command": command, "status": None, "timed_out": False, "error": str(exc)}
        # a blocking wait, the timeout a timer's kill: Popen.wait(timeout) polls with sleeps of up to 50 ms, so
        # the command's end was noticed up to 50 ms late (a tenth of a 200k-row compare)
        expired = threading.Event()
        timer = threading.Timer(timeout, lambda: expired.set() or _kill_group(proc.pid))
        timer.daemon = True
        timer.start()
        try:
            status: int | None = proc.wait()
        finally:
            timer.cancel()
        timed_out = expired.is_set()
        if timed_out:
            status = None
    tail = [line for line in stderr.read_text(errors="replace").splitlines() if line.strip()][-3:]
    return {"command": command, "status": status, "timed_out": timed_out, "seconds": time.monotonic() - started,
            "stdout": str(stdout), "stderr": str(stderr), "stderr_tail": tail}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it ended as the timer fired


def _command_problem(result: dict | None, timeout: float, boundary: Boundary) -> str | None:
    if result is None:
        return None
    if result.get("error"):
        return f"oracle command could not start: {result['error']}"
    if result["timed_out"]:
        return f"oracle command timed out after {timeout:g} s and was killed (output in {result['stdout']})"
    if result["status"] != 0:
        failure = environment_failure(result, *command_reach(boundary))
        if failure is not None:  # where it runs, in its own words and with the fix, before its last lines
            return f"oracle command exited with status {result['status']}: {failure.words()}"
        tail = " | ".join(result["stderr_tail"])
        return f"oracle command exited with status {result['status']}" + (f": {tail}" if tail else "")
    return None


def _not_written(results: list[dict], result: dict | None, boundary: Boundary) -> None:
    """A candidate the command did not write because the command failed says so, not only "no such file": the
    command's own words are the finding (the problem line quotes them, or here where it exited 0 regardless)."""
    if not result or result.get("error") or result.get("timed_out"):
        return
    if result["status"] != 0:
        why = f"not written: the oracle command failed (status {result['status']}, its words below)"
    else:
        failure = environment_failure(result, *command_reach(boundary))
        if failure is None:
            return
        why = f"not written; the oracle command exited 0, but {failure.words()}"
    for entry in results:
        if entry.get("error_kind") == "missing file" and entry.get("error_side") == "candidate":
            entry["error"] = f"{entry['error']}: {why}"


def _clean_candidates(entries: list[CompareConfig], workspace: Path) -> None:
    """Remove the candidates (inside the workspace only, never a reference) so only fresh output is compared. A
    candidate that is a link is removed itself, never the file it names (a reference, the solver's own source)."""
    root = workspace.resolve()
    references = {resolve(workspace, split_part(c.reference)[0]).resolve() for c in entries}
    for comp in entries:
        named = resolve(workspace, split_part(comp.candidate)[0])
        if named.is_symlink():
            if named.parent.resolve().is_relative_to(root):
                named.unlink()
            continue
        path = named.resolve()
        if path.is_file() and path.is_relative_to(root) and path not in references:
            path.unlink()


def _one(comp: CompareConfig, workspace: Path, store: Path | None, scan: Scan | None = None,
         references: dict[tuple[int, int], str] | None = None, outputs: Path | None = None) -> dict:
    """One comparison's entry. ``references``: copies.reference_inodes (a candidate that is a reference file is
    refused); ``outputs``: where the candidate is read (the verdict's tree; default the workspace)."""
    outputs = outputs or workspace
    entry: dict = {"name": comp.name, "heldout": comp.heldout, "passed": False, "ratio": math.inf,
                   "candidate": comp.candidate, "x": comp.x, "interpolate": comp.interpolate,
                   "range": list(comp.range) if comp.range else None, "error": None}
    if not comp.heldout:
        entry["reference"] = comp.reference
    if not comp.columns and comp.x is None:
        try:
            path, part = reference_path(comp, workspace, store)
            with contextlib.ExitStack() as stack:
                found = field_entry(comp, path, part, *opened_candidate(comp, outputs, stack, references), scan)
            if found is not None:  # the reference is an N-d field (else: a table, read below)
                entry.update(found)
                return entry
        except OracleInputError as exc:
            entry.update(error=str(exc), error_side=exc.side, error_kind=exc.kind)
            return entry
        except Exception as exc:  # noqa: BLE001 - as below: one comparison's bug must not stop the supervisor
            entry.update(error=f"could not compare: {type(exc).__name__}: {exc}", error_side="both",
                         error_kind="internal error")
            return entry
    side = "candidate"
    # The two files are read side by side (the parsers release the GIL: a million-row pair in the time of one);
    # a candidate's error is still the one reported first.
    with ThreadPoolExecutor(max_workers=2) as pool:
        try:
            cand_reading = pool.submit(read_candidate, comp, outputs, references)
            ref_reading = pool.submit(read_reference, comp, workspace, store)
            cand = cand_reading.result()
            side = "reference"
            path, ref = ref_reading.result()
            if scan is not None:  # the embedded-values scan uses the values just parsed, not a second read
                scan.take(path, ref)
            side = "both"
            entry.update(compare_tables(comp, cand, ref))
        except OracleInputError as exc:
            entry.update(error=str(exc), error_side=exc.side if exc.side != "both" else side, error_kind=exc.kind)
        except Exception as exc:  # noqa: BLE001 - a bug or odd file in one comparison must not stop the supervisor
            entry.update(error=f"could not compare: {type(exc).__name__}: {exc}", error_side=side,
                         error_kind="internal error")
    return entry


def _moved_aside(command: str, where: Path, cfg: OracleConfig, out_dir: Path, store: Path | None,
                 visible: list[Path], workspace: Path) -> dict:
    """No namespace: the visible references leave the workspace for the command's length (the run's store keeps
    their copies); without a store (a user's `nightshift compare`) they stay readable. It runs in ``where``."""
    if store is not None:
        move_aside(workspace, store, visible)
    try:
        from nightshift.supervisor.verify.verdict_references import references_aside  # a verdict's only
        with references_aside(where, workspace, visible) if where != workspace else contextlib.nullcontext():
            return run_command(["bash", "-c", command], command, where, cfg.timeout, out_dir)
    finally:
        if store is not None:
            put_back(workspace, store)


def _sealed_command(cfg: OracleConfig, command: str, workspace: Path, out_dir: Path, store: Path | None,
                    boundary: Boundary, tree: Path | None = None) -> tuple[dict, Seal]:
    """Run the command where no reference can be read; the result and how far that held (``Seal``). ``tree``: the
    verdict's tree (verify/verdict_tree.py), where it runs instead of the workspace, which it does not see."""
    visible = [resolve(workspace, split_part(c.reference)[0]).resolve() for c in cfg.compare if not c.heldout]
    where = tree or workspace
    written = frozenset(resolve(where, split_part(c.candidate)[0]).resolve().parent for c in cfg.compare)
    empty = out_dir / ".empty"  # what a reference in a folder the solver writes to reads as (private, empty)
    empty.write_bytes(b"")
    problem = boundary.problem
    if problem is None or boundary.tier.hides_files:  # a namespace, or Landlock without one (sandbox/tier.py)
        with command_namespace(boundary, "oracle", command, written, empty) as ns:
            result = run_command(ns.argv, command, where, cfg.timeout, out_dir)
            leftovers = ns.leftovers()
        bwrap_said = [line for line in result.get("stderr_tail", []) if line.startswith("bwrap:")]
        if not (result.get("status") == 1 and bwrap_said):
            seal = Seal("namespace", heldout_protected=True, leftovers=leftovers)
            shared = sorted(str(p.relative_to(workspace.resolve())) for p in {r.parent for r in visible} & written
                            if p.is_relative_to(workspace.resolve()))
            if shared:
                seal.notes.append(f"{', '.join(shared)} holds references and candidates: its references read as "
                                  "empty files while the oracle command runs; keep references in a folder of their own")
            return result, seal
        problem = bwrap_said[0]  # bubblewrap could not mask a path (a filesystem it cannot mount over)
    result = _moved_aside(command, where, cfg, out_dir, store, visible, workspace)
    seal = Seal("moved" if store is not None else "none", heldout_protected=not any(c.heldout for c in cfg.compare))
    seal.notes.append(f"visible references {'were moved out of the workspace' if store else 'stayed readable'} while "
                      f"the oracle command ran ({problem})")
    if not seal.heldout_protected:
        seal.warnings.append(f"held-out references were NOT hidden from the oracle command on this machine "
                             f"({problem}): a solver run by the same user could read them; bubblewrap (or a store "
                             "readable only by another account) would protect them")
    return result, seal


def run_oracle(cfg: OracleConfig, workspace: Path, out_dir: Path, store: Path | None, full: bool = True,
               boundary: Boundary | None = None, exam: Exam | None = None, base: str | None = None,
               in_turn: bool = False, heldout_left_out: int = 0, tree: Path | None = None) -> OracleOutcome:
    """``boundary``: the run's (supervisor/sandbox); without one, the oracle's own references and defaults.
    ``exam``: what a held-out comparison may tell (supervisor/verify/oracle/exam.py); None only for `nightshift
    compare`, which shows everything it reads. ``base``: the run's first commit (kept.py). ``in_turn``: the agent's
    own compare inside its turn (copies.not_out_of_reach); ``heldout_left_out``: held-out comparisons the caller
    took out of ``cfg`` (evaluated at a claim of done), still counted as the exam that proves the answers.
    ``tree``: the verdict's tree (verify/verdict_tree.py) with ``boundary`` made for it: the command runs there and
    the candidates are read there; the references, kept copies and pasted values are the workspace's."""
    workspace, out_dir = Path(workspace), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    setup_problems = []
    try:
        tampered = restore_references(workspace, store) if store is not None else []
    except OSError as exc:  # the verdict fails; the supervisor goes on
        tampered = [f"reference integrity could not be checked: {exc}"]
    entries = cfg.selected(full)
    command = cfg.command_for(full)
    result, seal = None, Seal("none", heldout_protected=True)
    boundary = boundary or boundary_for_oracle(workspace, cfg)
    try:
        if command and cfg.clean_candidates:
            _clean_candidates(entries, tree or workspace)
    except OSError as exc:
        setup_problems.append(f"a stale candidate could not be removed before the command: {exc}")
    placed = {}
    if tree is not None:  # the references the tests read, at their places in the verdict's tree (restored first)
        from nightshift.supervisor.verify.verdict_references import place_references
        placed = place_references(tree, workspace, _visible_refs(cfg, workspace))
    refs = reference_files(cfg, workspace, store)
    inodes = reference_inodes(cfg, refs)
    inodes.update(placed)  # a candidate linked to the tree's copy of a reference reads the reference's bytes
    computed = [w for w in [window(store)] if w]  # what sealed commands wrote, untouched since: their output
    kept = kept_copies(cfg, workspace, refs, base, window(store))  # what the command could copy from
    if command:
        began = time.time_ns()
        result, seal = _sealed_command(cfg, command, workspace, out_dir, store, boundary, tree)
        if seal.how == "namespace":  # what it wrote was computed: not a copy at the next verdict (kept.py)
            computed.append((began, time.time_ns()))
            remember_window(store, *computed[-1])
    started = time.monotonic()
    scan = start_scan(workspace, entries, refs, cfg.embedded_run, cfg.compare, base, computed)
    results = [_one(comp, workspace, store, scan, inodes, tree) for comp in entries]
    _not_written(results, result, boundary)
    problems = setup_problems + [p for p in [_command_problem(result, cfg.timeout, boundary)] if p] + tampered
    if result is not None and result.get("status") not in (0, None):
        hint = missing_reference_hint(result.get("stderr_tail", []), _visible_refs(cfg, workspace), workspace)
        problems += [hint] if hint else []
    seal_notes = seal.notes + seal.warnings + [n for n in [leftover_line("oracle", seal.leftovers)] if n]
    reach = not_out_of_reach(cfg, result is not None, seal.how, in_turn)  # None: an exact match was not copied
    copies = copy_check(entries, results, scan, refs, reach, kept)
    problems += copies.findings
    seal_notes += copies.notes
    words, record = release(results, exam) if exam is not None else ({}, None)
    private = [p for p in problems if "held-out" in p] if exam is not None else []
    shown = [agent_entry(e, words[e["name"]]) if e["name"] in words else e for e in results]
    counted = [e for e in results if e["name"] not in words or record is not None]  # what this verdict answers
    metrics = {e["name"]: float(e["ratio"]) for e in results if e["name"] not in words}  # no held-out figure
    passed = not [p for p in problems if p not in private or record] and all(e["passed"] for e in counted)
    problems = [p for p in problems if p not in private] + \
        ["a held-out comparison has a finding (shown to the user)"] * bool(private and record)
    summary = summary_line(shown, [f"{len(tampered)} reference(s) restored after tampering"] * bool(tampered)
                           + [p for p in problems if p not in tampered])
    exact = [] if reach is not None or problems else \
        exact_notes(shown, results, exam is None or record is not None,
                    sum(c.heldout for c in cfg.compare) + heldout_left_out, in_turn,  # the agent's look: its stop decides
                    tree is None and any(e.get("ratio") == 0 for e in shown) and _has_history(workspace))
    summary += f" ({', '.join(e['name'] for e in shown if e.get('exact'))} matched bit for bit)" if exact else ""
    if not seal.heldout_protected and any(e["heldout"] for e in results):
        summary += " [held-out references not protected from the solver on this machine]"
    report = {"v": 1, "mode": "full" if full else "fast", "passed": passed, "summary": summary,
              "metric": max(metrics.values()) if metrics else None, "metrics": metrics,
              "command": result, "tampered": tampered, "problems": problems, "seal": seal_notes,
              "sealed": seal.how, "heldout_protected": seal.heldout_protected,
              "compare_seconds": time.monotonic() - started, "scan_seconds": scan.seconds,
              "copy_scan_seconds": copies.seconds, "exact": exact, "comparisons": shown}
    report = strict_json(report)
    _write_json(out_dir / "oracle.json", report)
    if exam is not None and exam.private is not None and words:
        write_private(exam.private, out_dir, results, private, record)
    warnings = seal.warnings + [n for n in [leftover_line("oracle", seal.leftovers)] if n]
    lines = [p for p in problems if p not in tampered] + pushback_lines(shown)
    lines += [f"note: {n}" for n in warnings + exact]
    return OracleOutcome(passed, summary, lines, metrics, max(metrics.values()) if metrics else None,
                         report, tampered, record)


def _has_history(workspace: Path) -> bool:
    """Does the workspace's git hold a commit (a process in it can read the history: `git show HEAD:...`)?"""
    from nightshift.supervisor.gitguard import run_git
    try:
        return run_git(workspace, "rev-parse", "-q", "--verify", "HEAD").returncode == 0
    except Exception:  # noqa: BLE001 - no git, a git that hangs: say nothing of a history
        return False


def _visible_refs(cfg: OracleConfig, workspace: Path) -> list[Path]:
    return [resolve(workspace, split_part(c.reference)[0]).resolve() for c in cfg.compare if not c.heldout]


def load_report(path: Path) -> dict:
    return json.loads(Path(path).read_text())
