"""`nightshift verify-result FILE|COMMIT [--key PUB] [--rerun] [--allow-missing NAME] [--references DIR]`: the
envelope's signature (DSSE, over the PAE) and every digest it names, against the working tree: the commit is in
the repository, the candidates and references are the bytes attested, nightshift.toml at the commit is the one
verified, the run's event log (where it is here) begins with the bytes attested, and held-out references are found
by digest where the checker has them. With --rerun the figures are measured again (rerun.py).

A mismatch is a line; something that cannot be checked here is a line naming what `--allow-missing` takes; exit 0
only when the attested verdict passed and everything named holds.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from supervisor.attest.digests import digests_under, sha256_bytes, sha256_prefix
from supervisor.attest.config_view import file_of
from supervisor.attest.envelope import EnvelopeProblem, open_envelope, signature_holds
from supervisor.attest.findings import DigestFinder, Findings
from supervisor.attest.gitnotes import blob_at, commit_of, read_note
from supervisor.attest.keys import default_ssh_key, fingerprint, load_public, own_key_path
from supervisor.attest.statement import PREDICATE_TYPE, STATEMENT_TYPE, validate
from supervisor.config import CONFIG_NAME
from supervisor.errors import UserError
from supervisor.run.paths import user_state_dir

MAX_ENVELOPE = 64 << 20


def load_target(target: str, workspace: Path) -> tuple[dict[str, Any], str]:
    """(the envelope document, where it came from) for a file, or a commit's git note."""
    path = Path(target)
    if path.is_file():
        if path.stat().st_size > MAX_ENVELOPE:
            raise EnvelopeProblem(f"{path} is larger than any attestation ({path.stat().st_size} bytes); give the "
                                  ".dsse.json file `nightshift attest` wrote")
        try:
            return json.loads(path.read_bytes()), str(path)
        except ValueError as exc:
            raise EnvelopeProblem(f"{path} is not JSON ({exc}); give the .dsse.json file `nightshift attest` "
                                  "wrote") from None
    if not (workspace / ".git").exists():
        raise UserError(f"{target} is not a file, and {workspace} is not a git repository to look a commit up in; "
                        "give the attestation file, or --dir the clone")
    sha = commit_of(workspace, target)
    if sha is None:
        raise UserError(f"{target} is neither a file nor a commit of the repository at {workspace}; give the "
                        ".dsse.json file, or a commit that is there (`git fetch` it first)")
    lines = read_note(workspace, sha)
    if not lines:
        raise UserError(f"commit {sha[:12]} has no nightshift attestation in refs/notes/nightshift; `git fetch "
                        "origin refs/notes/nightshift:refs/notes/nightshift` brings published ones")
    try:
        doc = json.loads(lines[-1])
    except ValueError:
        raise EnvelopeProblem(f"the nightshift note on {sha[:12]} is not JSON (it was changed)") from None
    doc.pop("nightshift", None)
    more = f" (the newest of {len(lines)})" if len(lines) > 1 else ""
    return doc, f"the git note on {sha[:12]}{more}"


def workspace_of(target: str, given: str | None) -> Path:
    """--dir, else the workspace of a run whose attestations folder holds FILE, else the current folder."""
    if given:
        return Path(given).resolve()
    path = Path(target).resolve()
    if path.is_file() and path.parent.name == "attestations" and path.parents[3].name == ".nightshift":
        return path.parents[4]
    return Path.cwd()


def _signature(envelope, predicate: dict[str, Any], key: Path | None, found: Findings) -> None:
    if not envelope.signatures:
        found.missing("signature", "the envelope is unsigned: its digests are checked, but nothing says who made it")
        return
    if key is not None:
        public = load_public(key)
        if signature_holds(envelope, public):
            found.ok(f"signature holds for {fingerprint(public)} ({key})")
        else:
            found.mismatch(f"the signature does not hold for {fingerprint(public)} ({key}): the envelope was "
                           "changed, or another key signed it")
        return
    signer = predicate.get("signer")
    named = signer.get("public_key") if isinstance(signer, dict) else None
    try:
        embedded = load_public_line(named) if named else None
    except UserError:
        embedded = None
    if embedded is None or not signature_holds(envelope, embedded):
        found.mismatch("the signature does not hold for the key the statement names: the envelope was changed")
        return
    for mine in (own_key_path(), default_ssh_key()):
        pub = mine.with_name(mine.name + ".pub")
        try:
            if pub.is_file() and fingerprint(load_public(pub)) == fingerprint(embedded):
                found.ok(f"signature holds for {fingerprint(embedded)}, your own key ({pub})")
                return
        except UserError:
            continue
    found.mismatch(f"signed by {fingerprint(embedded)}, a key you did not name: give the signer's public key with "
                   "--key PUB to trust it")


def load_public_line(line: str):
    from cryptography.hazmat.primitives import serialization
    try:
        return serialization.load_ssh_public_key(line.encode())
    except (ValueError, TypeError):
        raise UserError("the statement's signer key is unreadable") from None


def _digest_line(found: Findings, what: str, want: str | None, root: Path, rel: str, name: str,
                 digests: dict) -> None:
    if not want:
        found.note(f"{what} {rel}: no digest was attested (the outputs it measured were gone: a later "
                   "verdict's had replaced them, or a fleet measured them in a checkout of its own; --rerun makes them)")
        return
    got = digests.get((root, rel))
    if isinstance(got, FileNotFoundError):
        found.missing(name, f"{what} {rel} is not in {root}")
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
    found = Findings(allowed=set(allow))
    doc, source = load_target(target, workspace)
    envelope, statement = open_envelope(doc, source)
    if statement.get("_type") != STATEMENT_TYPE or statement.get("predicateType") != PREDICATE_TYPE:
        raise EnvelopeProblem(f"{source} is not a nightshift attestation (type {statement.get('_type')!r}, predicate "
                              f"{statement.get('predicateType')!r})")
    predicate = statement.get("predicate") if isinstance(statement.get("predicate"), dict) else {}
    broken = validate(statement)
    for problem in broken[:10]:
        found.mismatch(f"the predicate breaks its schema at {problem}")
    _signature(envelope, predicate, key, found)
    if broken:  # a statement that is not of the published form is not read further
        return found
    commit = str(predicate.get("commit", ""))
    subject = next((s for s in statement.get("subject") or [] if s.get("name") == "commit"), {})
    if (subject.get("digest") or {}).get("gitCommit") != commit:
        found.mismatch(f"the commit subject does not name the predicate's commit {commit[:12]}")
    here = commit_of(workspace, commit) if (workspace / ".git").exists() and commit else None
    if here is None:
        found.mismatch(f"commit {commit[:12]} is not in the repository at {workspace}: check in the clone that has "
                       "it (`git fetch origin` it), or --dir that clone")
    else:
        found.ok(f"commit {commit[:12]} is in the repository")
        toml = blob_at(workspace, commit, CONFIG_NAME)
        want = (predicate.get("oracle") or {}).get("config_sha256")
        if toml is not None and sha256_bytes(toml) == want:
            found.ok(f"{CONFIG_NAME} at {commit[:12]}: sha256 {want[:16]}… as attested")
        else:
            found.mismatch(f"{CONFIG_NAME} at {commit[:12]} is not the attested one")
        _definition_of_done(found, workspace, commit, predicate)
    finder = DigestFinder(references + [user_state_dir() / "heldout"])
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
    _event_log(found, workspace, predicate)
    if rerun and here is not None:
        from supervisor.attest.rerun import rerun_oracle
        rerun_oracle(predicate, workspace, finder, found)
    result = predicate.get("result") or {}
    if result.get("passed") is not True:
        found.mismatch(f"the attested verdict FAILED ({str(result.get('summary', ''))[:200]})")
    return found


def _definition_of_done(found: Findings, workspace: Path, commit: str, predicate: dict[str, Any]) -> None:
    from supervisor.verify import definition_of_done as dod
    want = (predicate.get("definition_of_done") or {}).get("sha256")
    section = dod.section((blob_at(workspace, commit, "CLAUDE.md") or b"").decode("utf-8", "replace"))
    got = sha256_bytes(dod.words(section).encode()) if section else None
    if got == want:
        found.ok(f"CLAUDE.md's Definition of done at {commit[:12]}: as attested" if want else
                 f"CLAUDE.md at {commit[:12]} has no Definition of done, as attested")
    else:
        found.mismatch(f"CLAUDE.md's Definition of done at {commit[:12]} is not the attested one")


def _event_log(found: Findings, workspace: Path, predicate: dict[str, Any]) -> None:
    log = predicate.get("event_log") or {}
    run_id = str((predicate.get("run") or {}).get("id", ""))
    path = workspace / ".nightshift" / "runs" / run_id / "events.jsonl"
    if not re.fullmatch(r"[\w.-]+", run_id) or run_id in (".", "..") or not path.is_file():
        found.missing("event-log", f"the run's event log (.nightshift/runs/{run_id}/events.jsonl) is not here")
        return
    got = sha256_prefix(path, int(log.get("bytes") or 0))
    if got == log.get("sha256"):
        found.ok(f"event log: its first {log.get('bytes')} bytes are as attested")
    else:
        found.mismatch(f"event log {path}: its first {log.get('bytes')} bytes are not the attested ones (sha256 "
                       f"{str(got)[:16]}… vs {str(log.get('sha256'))[:16]}…)")
