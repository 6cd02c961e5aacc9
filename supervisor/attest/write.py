"""`nightshift attest RUN [--verdict N]` and the hook at every verified done: the Statement of a verdict, sealed in
a DSSE envelope (signed when a key is found), written as ``<run>/attestations/verdict-<N>.dsse.json`` and kept as a
git note on the verified commit; beside it, signed by the same key, the standard statements of the same verdict
(in-toto test-result, SLSA VSA: standard.py), in the note and in ``verdict-<N>.intoto.jsonl`` (all three).

Every check of the input (the verdict, the key, the config) comes before the first write, so a bad input writes
nothing over. At a verified done the supervisor cannot ask anyone: a key that cannot sign there (a passphrase and no
agent) gives an unsigned attestation that says why, and `nightshift attest RUN` signs it later.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from nightshift.supervisor.attest.digests import sha256_prefix
from nightshift.supervisor.attest.config_view import run_config
from nightshift.supervisor.attest.envelope import seal
from nightshift.supervisor.attest.facts import verdict_facts
from nightshift.supervisor.attest.gitnotes import GitProblem, add_note
from nightshift.supervisor.attest.keys import KeyProblem, chosen_key, signing_key
from nightshift.supervisor.attest.standard import test_result, vsa
from nightshift.supervisor.attest.statement import build_statement, validate
from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.run.private import write_private_bytes


@dataclass
class Attested:
    path: Path
    sha256: str  # of the envelope file
    verdict: int
    passed: bool
    commit: str
    fingerprint: str | None  # None: unsigned
    noted: bool
    problems: list[str]

    def lines(self) -> list[str]:
        word = "PASSED" if self.passed else "FAILED"
        signed = f"signed by {self.fingerprint}" if self.fingerprint else "UNSIGNED"
        out = [f"attestation of verdict {self.verdict} ({word}) on commit {self.commit[:12]}: {self.path}",
               f"  {signed}; envelope sha256 {self.sha256}",
               f"  git note on {self.commit[:12]} under refs/notes/nightshift" if self.noted else "  no git note"]
        return out + [f"  note: {p}" for p in self.problems]


def _signed(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text()).get("signatures"))
    except (OSError, ValueError, AttributeError):
        return False


def attestation_path(run_root: Path, verdict: int) -> Path:
    return Path(run_root) / "attestations" / f"verdict-{verdict}.dsse.json"


def bundle_path(run_root: Path, verdict: int) -> Path:
    """nightshift's statement and the standard ones (test-result, SLSA VSA), an envelope a line (in-toto's bundle)."""
    return Path(run_root) / "attestations" / f"verdict-{verdict}.intoto.jsonl"


def attest_verdict(run_root: Path, number: int | None = None, at_done: bool = False,
                   key: str | None = None) -> Attested:
    """``key``: a key file for this attestation instead of ``[attest] key`` (the run's, frozen at its start)."""
    facts = verdict_facts(run_root, number)
    config = run_config(facts.config_text)
    problems: list[str] = []
    try:
        setting = config.attest.key if key is None else key
        key_file = chosen_key(setting, "[attest] key" if key is None else "--key")
        signer = signing_key(key_file) if key_file else None
    except KeyProblem as exc:
        if not at_done:
            raise
        signer, setting = None, config.attest.key
        problems.append(f"unsigned: {exc}; then `nightshift attest {facts.run.run_id}` signs it")
    if signer is None and not problems:
        why = "[attest] key = \"none\"" if setting.strip().lower() == "none" else "no key was found"
        problems.append(f"unsigned ({why}): nothing vouches for who made it; `nightshift attest --new-key` makes a key")
    path = attestation_path(facts.run.root, facts.number)
    if signer is None and not at_done and _signed(path):
        raise KeyProblem(f"{path} is signed; an unsigned attestation would replace it, so nothing was written: give "
                         "the key with --key (or through ssh-agent), or remove that file first")
    statement = build_statement(facts, config)
    predicate = statement["predicate"]
    predicate["event_log"]["sha256"] = sha256_prefix(facts.run.events, facts.log_bytes)
    predicate["signer"] = signer.describe() if signer else None
    wrong = validate(statement)
    if wrong:  # our own statement breaks our own schema: a bug, never published
        raise RuntimeError(f"the attestation does not validate against its schema: {wrong[0]}")
    envelope = seal(statement, signer)
    uri = next((s.get("uri") for s in statement["subject"] if s.get("uri")), None)
    beside = [seal(test_result(statement), signer), seal(vsa(statement, uri), signer)]  # the standards' statements
    body = (json.dumps(envelope, indent=1) + "\n").encode()
    make_private_dir(path.parent)
    write_private_bytes(path, body, durable=True)
    bundle = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in [envelope, *beside]).encode()
    write_private_bytes(bundle_path(facts.run.root, facts.number), bundle, durable=True)
    noted = False
    if config.attest.note:
        try:
            add_note(facts.run.workspace, facts.commit, [envelope, *beside], facts.run.run_id, facts.number)
            noted = True
        except (GitProblem, OSError) as exc:
            problems.append(f"the git note was not written ({exc}); the file holds the attestation")
    return Attested(path, hashlib.sha256(body).hexdigest(), facts.number, facts.passed, facts.commit,
                    signer.fingerprint if signer else None, noted, problems)
