"""`nightshift verify-result FILE|COMMIT [--key PUB] [--rerun] [--allow-missing NAME] [--references DIR]`: every claim
of the chosen statement (bundle.py picks it by subject and verdict) checked against what is here, or named as the
signer's word. The envelope's signature (DSSE, over the PAE, whatever keyid it carries); the subjects; the commit and
what it holds (claims_commit.py: nightshift.toml and every claim it answers, the Definition of done, nightshift's
message for the verdict); the candidates and references by digest in the working tree; held-out references by
digest where the checker has them; the run's event log where it is here (claims_log.py), else named as what only
the run's machine had (no failure: a referee on a fresh clone has no event log); with --rerun the figures and the
ratchet's tests measured again (rerun.py); the standard statements beside it (standard.py); and, last, every claim
nothing checked (stated.py).

A mismatch is a line; something that cannot be checked here is a line naming what `--allow-missing` takes; exit 0
only when the attested verdict passed and everything named holds.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.bundle import load_bundle
from nightshift.supervisor.attest.claims_commit import check_config, check_definition_of_done, check_message, check_subjects
from nightshift.supervisor.attest.config_view import file_of
from nightshift.supervisor.attest.digests import digests_under, sha256_bytes
from nightshift.supervisor.attest.findings import DigestFinder, Findings
from nightshift.supervisor.attest.gitnotes import commit_of
from nightshift.supervisor.attest.keys import default_ssh_key, fingerprint, load_public, own_key_path
from nightshift.supervisor.attest.statement import STATEMENT_TYPE, VERSION, read_predicate
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import user_state_dir
from nightshift.supervisor.run.untrusted import read_bytes


def workspace_of(target: str, given: str | None) -> Path:
    """--dir, else the workspace of a run whose attestations folder holds FILE, else the current folder."""
    if given:
        return Path(given).resolve()
    path = Path(target).resolve()
    if path.is_file() and path.parent.name == "attestations" and path.parents[3].name == ".nightshift":
        return path.parents[4]
    return Path.cwd()


def load_public_line(line: str):
    from cryptography.hazmat.primitives import serialization
    try:
        return serialization.load_ssh_public_key(line.encode())
    except (ValueError, TypeError):
        raise UserError("the statement's signer key is unreadable") from None


def _named_key(predicate: dict[str, Any]):
    signer = predicate.get("signer")
    line = signer.get("public_key") if isinstance(signer, dict) else None
    try:
        return load_public_line(line) if line else None
    except UserError:
        return None


def _signature(envelope, predicate: dict[str, Any], key: Path | None, found: Findings):
    """The public key the envelope is checked against when its signature holds (None: it does not, or unsigned)."""
    found.claim("signer")
    if not envelope.signatures:
        named = _named_key(predicate)
        if named is not None:  # the statement says who signed it: a signature taken off, not one never made
            found.mismatch(f"the statement names its signer, {fingerprint(named)}, but the envelope carries no "
                           "signature: it was removed, and the statement may have been changed with it")
        elif key is not None:
            found.mismatch(f"the envelope is unsigned: nothing in it is signed by the key you gave ({key})")
        else:
            found.unsigned("the envelope is unsigned: its digests are checked, but nothing says who made it")
        return None
    named = _named_key(predicate)
    if key is not None:
        public = load_public(key)
        if envelope.signed_by(public):
            found.ok(f"signature holds for {fingerprint(public)} ({key})")
            return public
        if named is not None and envelope.signed_by(named):
            found.mismatch(f"the envelope is signed by {fingerprint(named)} (the key the statement names), not by "
                           f"the key you gave, {fingerprint(public)} ({key})")
        else:
            hints = ", ".join(envelope.keyids()) or "none"
            found.mismatch(f"the signature does not hold for {fingerprint(public)} ({key}): the envelope was changed, "
                           f"or another key signed it (keyid hints: {hints[:80]})")
        return None
    if named is None or not envelope.signed_by(named):
        found.mismatch("the signature does not hold for the key the statement names: the envelope was changed")
        return None
    for mine in (own_key_path(), default_ssh_key()):
        pub = mine.with_name(mine.name + ".pub")
        try:
            if pub.is_file() and fingerprint(load_public(pub)) == fingerprint(named):
                found.ok(f"signature holds for {fingerprint(named)}, your own key ({pub})")
                return named
        except UserError:
            continue
    found.mismatch(f"signed by {fingerprint(named)}, a key you did not name: give the signer's public key with "
                   "--key PUB to trust it")
    return None


def _digest_line(found: Findings, what: str, want: str | None, root: Path, rel: str, name: str,
                 digests: dict) -> None:
    if not want:
        found.note(f"{what} {rel}: no digest was attested (the outputs it measured were gone: a later "
                   "verdict's had replaced them, or a fleet measured them in a checkout of its own; --rerun makes them)")
        return
    got = digests.get((root, rel))
    if isinstance(got, FileNotFoundError):
        found.missing(name, f"{what} {rel} is not in {root}" + (" (--rerun makes it)" if what == "candidate" else
                                                                 " (--references DIR where you have it)"))
        return
    if not isinstance(got, str):
        found.mismatch(f"{what} {rel}: cannot be read as a plain file ({got})")
        return
    if got == want:
        found.ok(f"{what} {rel}: sha256 {want[:16]}… as attested")
    else:
        found.mismatch(f"{what} {rel}: sha256 {got[:16]}… is not the attested {want[:16]}…")


def check_result(target: str, workspace: Path, key: Path | None, allow: list[str], references: list[Path],
                 rerun: bool) -> Findings:
    from nightshift.supervisor.attest.claims_log import check_ratchet_ids
    from nightshift.supervisor.attest.standard import check_companions
    from nightshift.supervisor.attest.stated import check_nightshift, check_uri, list_stated
    found = Findings(allowed=set(allow))
    bundle = load_bundle(target, workspace)
    envelope, statement = bundle.ours.envelope, bundle.ours.statement
    for line in bundle.skipped:
        found.skipped(line)
    if statement.get("_type") != STATEMENT_TYPE:
        found.mismatch(f"the statement's _type is {statement.get('_type')!r}, not {STATEMENT_TYPE}")
    predicate = statement.get("predicate") if isinstance(statement.get("predicate"), dict) else {}
    broken, extras = read_predicate(statement)
    for problem in broken[:10]:
        found.mismatch(f"the predicate breaks its schema at {problem}")
    if extras:
        found.note(f"the predicate is version {predicate.get('version')}, newer than this nightshift's {VERSION}: "
                   f"its fields this version does not know are read but not checked: {', '.join(extras[:20])}")
    public = _signature(envelope, predicate, key, found)
    if broken:  # a statement that is not of the published form is not read further
        return found
    check_subjects(found, statement, predicate)
    commit = str(predicate.get("commit", ""))
    here = commit_of(workspace, commit) if (workspace / ".git").exists() and commit else None
    if here is None:
        found.mismatch(f"commit {commit[:12]} is not in the repository at {workspace}: check in the clone that has "
                       "it (`git fetch origin` it), or --dir that clone")
    else:
        found.ok(f"commit {commit[:12]} is in the repository")
        check_config(found, workspace, commit, predicate)
        check_definition_of_done(found, workspace, commit, predicate)
        check_message(found, workspace, commit, predicate)
    finder = _finder(references)  # the reference folders and the held-out store, walked once
    _files(found, workspace, predicate, finder, rerun)
    run_folder = _event_log(found, workspace, predicate)
    if run_folder is not None:
        check_ratchet_ids(found, workspace, run_folder, predicate)
    check_sandbox(found, predicate)
    check_nightshift(found, predicate.get("environment") or {})
    check_uri(found, statement, workspace)
    if rerun and here is not None:
        from nightshift.supervisor.attest.rerun import rerun_oracle
        rerun_oracle(predicate, workspace, finder, found)
    check_companions(bundle.companions, statement, public, found)
    result = predicate.get("result") or {}
    if result.get("passed") is not True:
        found.mismatch(f"the attested verdict FAILED ({str(result.get('summary', ''))[:200]})")
    list_stated(found, predicate, statement)
    return found


def check_sandbox(found: Findings, predicate: dict[str, Any]) -> None:
    """The boundary the agent worked in: bubblewrap's full sandbox is ok; a weaker tier (or none stated) is missing
    unless the checker accepts it (--allow-missing sandbox), and the last line names it either way."""
    sandbox = predicate.get("sandbox") if isinstance(predicate.get("sandbox"), dict) else {}
    tier = str(sandbox.get("tier") or "unknown")
    found.sandbox = tier
    found.claim("sandbox")
    if tier == "full":
        found.ok("sandbox: full (bubblewrap's namespace held every process of the agent at this verdict)")
        return
    if tier == "unknown":  # a statement of version 1.1, or a run that did not record it
        found.note("the statement does not say which boundary the agent worked in (made before nightshift named it)")
        return
    left = "; ".join(str(x) for x in sandbox.get("left_open") or []) or "not stated"
    found.missing("sandbox", f"the agent worked in sandbox: {tier}, weaker than bubblewrap's full sandbox (left "
                             f"open: {left})")


def _finder(references: list[Path]) -> DigestFinder:
    return DigestFinder(references + [user_state_dir() / "heldout"])


def _files(found: Findings, workspace: Path, predicate: dict[str, Any], finder: DigestFinder, rerun: bool) -> None:
    """Candidates and references by digest in the working tree (candidates only without --rerun: with it they are
    made again), held-out references by digest among the checker's."""
    comparisons = [c for c in predicate.get("comparisons") or [] if isinstance(c, dict)]
    digests = digests_under([(workspace, file_of(str((c.get(side) or {}).get("path", ""))))
                             for c in comparisons if not c.get("heldout")
                             for side in (("reference",) if rerun else ("reference", "candidate"))])
    for comp in comparisons:
        ref = comp.get("reference") or {}
        if comp.get("heldout"):
            at = finder.find(ref.get("sha256") or "", ref.get("size"))
            if at is None:
                found.missing(comp["name"], f"held-out reference of {comp['name']} (sha256 {str(ref.get('sha256'))[:16]}…) "
                              "is not among the references you have: --references DIR where it is")
            else:
                found.ok(f"held-out reference of {comp['name']}: found by digest at {at}")
            continue
        _digest_line(found, "reference", ref.get("sha256"), workspace, file_of(str(ref.get("path", ""))),
                     comp["name"], digests)
        if not rerun:
            cand = comp.get("candidate") or {}
            _digest_line(found, "candidate", cand.get("sha256"), workspace, file_of(str(cand.get("path", ""))),
                         comp["name"], digests)


def _event_log(found: Findings, workspace: Path, predicate: dict[str, Any]) -> str | None:
    """The run's folder (relative to the workspace) when its event log is here and begins with the attested bytes (then its claims are read
    back from it); its absence is what only the run's machine had, said so, not a failure."""
    from nightshift.supervisor.attest.claims_log import check_log_claims
    log = predicate.get("event_log") or {}
    run_id = str((predicate.get("run") or {}).get("id", ""))
    rel = f".nightshift/runs/{run_id}/events.jsonl"
    length = int(log.get("bytes") or 0)
    try:  # read once, through no link and from no FIFO: the digest is of the bytes the claims are then read from
        blob = read_bytes(workspace, rel, limit=length) if re.fullmatch(r"[\w.-]+", run_id) and \
            run_id not in (".", "..") else None
    except OSError:
        blob = None
    if blob is None:
        if "event-log" in found.allowed or "all" in found.allowed:
            found.lines.append(("allowed", f"the run's event log ({rel}) is not here (allowed: --allow-missing "
                                           "event-log)"))
        else:
            found.elsewhere(f"the run's event log ({rel}) is only on the run's machine (it is not in git): what only "
                            "it can check is listed below as the signer's word")
        return None
    got = sha256_bytes(blob) if len(blob) == length else None
    if got != log.get("sha256"):
        found.mismatch(f"event log {workspace / rel}: its first {log.get('bytes')} bytes are not the attested ones "
                       f"(sha256 {str(got)[:16]}… vs {str(log.get('sha256'))[:16]}…)")
        return None
    found.ok(f"event log: its first {log.get('bytes')} bytes are as attested")
    check_log_claims(found, blob, predicate)
    return f".nightshift/runs/{run_id}"
