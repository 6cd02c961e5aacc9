"""`verify-result --rerun`: the attested commit written into a fresh tree from the repository's objects (no
checkout, so no hook, filter or attribute of the repository runs), its nightshift.toml checked against the attested
digest, the oracle command run in nightshift's namespace (bubblewrap, where it works: every reference absent while
it runs, as in a run) and every comparison measured again against the references the statement names (visible
ones from the tree, held-out ones found by digest where the checker has them). Each figure is confirmed within its
tolerance, with the attested figure beside it. Then the ratchet's tests, by id, in the same fresh tree
(rerun_tests.py).
"""
from __future__ import annotations

import dataclasses

import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.digests import sha256_bytes, sha256_under
from nightshift.supervisor.attest.findings import DigestFinder, Findings
from nightshift.supervisor.attest.gitnotes import write_tree
from nightshift.supervisor.config import CONFIG_NAME
from nightshift.supervisor.run.paths import make_private_dir, user_state_dir
from nightshift.supervisor.verify.oracle.readers import split_part


def _ratio(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.inf


def _fmt(value: float) -> str:
    return f"{value:.3g}x" if math.isfinite(value) else str(value)


def rerun_oracle(predicate: dict[str, Any], workspace: Path, finder: DigestFinder, found: Findings) -> None:
    base = make_private_dir(user_state_dir() / "tmp")
    folder = Path(tempfile.mkdtemp(prefix="rerun-", dir=base))
    try:
        _rerun(predicate, workspace, finder, found, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _rerun(predicate: dict[str, Any], workspace: Path, finder: DigestFinder, found: Findings, folder: Path) -> None:
    from nightshift.supervisor.config.schema import ConfigError, parse_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.verify.oracle.check import run_oracle

    commit = predicate["commit"]
    tree = folder / "tree"
    tree.mkdir()
    for note in write_tree(workspace, commit, tree):
        found.note(note)
    toml = tree / CONFIG_NAME
    text = toml.read_bytes() if toml.is_file() and not toml.is_symlink() else None
    if text is None or sha256_bytes(text) != (predicate.get("oracle") or {}).get("config_sha256"):
        found.mismatch(f"--rerun: {CONFIG_NAME} at {commit[:12]} is not the attested one; nothing was run")
        return
    try:
        config = parse_config(text.decode("utf-8"), f"{CONFIG_NAME} at {commit[:12]}")
    except (ConfigError, UnicodeDecodeError) as exc:
        found.mismatch(f"--rerun: {exc}")
        return
    if config.oracle is None:
        found.mismatch(f"--rerun: {CONFIG_NAME} at {commit[:12]} has no [oracle] to run")
        return
    attested = {c.get("name"): c for c in predicate.get("comparisons") or []}
    kept = []
    for comp in config.oracle.compare:
        want = attested.get(comp.name)
        if want is None:
            found.note(f"--rerun: comparison {comp.name} is not in the statement; not run")
            continue
        at = _reference(comp, want.get("reference") or {}, tree, workspace, finder, found)
        if at is None:
            continue
        part = split_part(comp.reference)[1]
        kept.append(comp.model_copy(update={"reference": str(at) + (f":{part}" if part else "")}))
    cfg = config.oracle.model_copy(update={"compare": kept})
    _git_as_in_the_verdict(workspace, commit, tree, found)
    # the boundary the verdict gave the command (one place: boundary_for), but "auto" whatever the commit's [policy]
    # says: the commit is the stranger here, and may not turn the namespace off
    boundary = dataclasses.replace(boundary_for(tree, config.model_copy(update={"oracle": cfg})), mode="auto")
    outcome = run_oracle(cfg, tree, folder / "oracle", None, full=True, boundary=boundary, exam=None)
    command = outcome.report.get("command") or {}
    if command and command.get("status") != 0:
        found.mismatch(f"--rerun: the oracle command `{command.get('command')}` failed (status "
                       f"{command.get('status')}, timed out: {command.get('timed_out')}): "
                       f"{' | '.join(command.get('stderr_tail') or [])[:300]}")
    if boundary.problem:
        found.note(f"--rerun: the oracle command ran without nightshift's namespace ({boundary.problem})")
    for problem in outcome.report.get("problems") or []:
        found.mismatch(f"--rerun: {problem}")
    for entry in outcome.report.get("comparisons") or []:
        _confirm(entry, attested.get(entry.get("name")) or {}, tree, found)
    found.claim("comparisons.figures", "commit")  # the commit's own outputs measured: what it claims is what it does
    from nightshift.supervisor.attest.rerun_tests import rerun_tests
    rerun_tests(predicate, config, tree, folder, found)


def _git_as_in_the_verdict(workspace: Path, commit: str, tree: Path, found: Findings) -> None:
    """The verdict's tree has a git of one commit without history (verify/verdict_tree.py): the same one here, so a
    build that asks git for its version gets the answer it got at the verdict."""
    from nightshift.supervisor.verify import verdict_tree
    from nightshift.supervisor.verify.verdict_git import git_without_history
    try:
        entries, _notes = verdict_tree.listing(workspace, commit)
    except Exception as exc:  # noqa: BLE001 - a listing git refuses: the rerun goes on without a git
        found.note(f"--rerun: no git repository in the fresh tree ({exc})")
        return
    problem = git_without_history(workspace, tree, entries, commit)
    if problem:
        found.note(f"--rerun: {problem}")


def _reference(comp, ref: dict[str, Any], tree: Path, workspace: Path, finder: DigestFinder,
               found: Findings) -> Path | None:
    """The file to measure ``comp`` against, the one the statement names by digest: the commit's own (a visible
    reference in git), else the working tree's, else one found by digest where the checker keeps references."""
    want, rel = ref.get("sha256") or "", split_part(comp.reference)[0]
    if not comp.heldout:
        for root in (tree, workspace):
            try:
                if sha256_under(root, rel)[0] == want:
                    return root / rel
            except OSError:
                continue
    at = finder.find(want, ref.get("size"))
    if at is None:  # named as missing (or as a mismatch) by the digest checks; it cannot be measured here
        found.note(f"--rerun: {'held-out ' if comp.heldout else ''}{comp.name} not re-run (no reference with the "
                   "attested digest here)")
    return at


def _confirm(entry: dict[str, Any], want: dict[str, Any], tree: Path, found: Findings) -> None:
    name = entry.get("name")
    if entry.get("heldout"):
        if entry.get("passed") and want.get("passed"):
            found.ok(f"--rerun: held-out {name} passes again")
        else:
            found.mismatch(f"--rerun: held-out {name} {'passes' if entry.get('passed') else 'FAILS'} "
                           f"(attested: {'pass' if want.get('passed') else 'fail'})" +
                           (f": {entry['error']}" if entry.get("error") else ""))
        return
    if entry.get("error"):
        found.mismatch(f"--rerun: {name}: {entry['error']}")
        return
    before = {c.get("column"): c for c in want.get("columns") or []}
    for col in entry.get("columns") or []:
        now, then = _ratio(col.get("ratio")), _ratio((before.get(col.get("column")) or {}).get("ratio"))
        head = f"--rerun: {name} / {col.get('column')}: worst error {_fmt(now)} its tolerance (attested {_fmt(then)})"
        if col.get("passed") and now <= 1:
            found.ok(head)
        else:
            found.mismatch(f"{head}: over the tolerance by {_fmt(now)}")
    if entry.get("uncovered"):
        found.mismatch(f"--rerun: {name}: {entry['uncovered'].get('count')} reference points not covered")
    cand = (want.get("candidate") or {})
    try:
        same = cand.get("sha256") and sha256_under(tree, split_part(cand.get("path", ""))[0])[0] == cand["sha256"]
    except OSError:
        same = False
    found.note(f"--rerun: candidate {cand.get('path')} " + ("reproduced bit for bit" if same else
               "differs in its bytes from the attested one (its figures are what is checked)"))
