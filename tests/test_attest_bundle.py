"""Envelopes and notes as the standards say. DSSE: the keyid is a hint only (absent, empty or another keyid still
verifies against the key given), base64 may be URL-safe and unpadded, a statement signed by another key names that
key. A note is a bundle of statements: chosen by subject and verdict, never by order; a statement of an unknown
predicate type is skipped and named while the others are checked; a predicate of a newer minor version is read and
its extra fields named, while our own version with an unknown field still breaks the schema."""
from __future__ import annotations

import base64
import json
import subprocess

import pytest

from tests.fixtures_attest import demo_run, read_envelope, resign, statement_of, write_note  # noqa: F401


def _verify(run, target, *more):
    return run.ns("verify-result", str(target), "--key", str(run.pub), "--dir", str(run.ws), *more)


@pytest.mark.parametrize("keyid", [None, "", "not-the-securesystemslib-keyid"], ids=["absent", "empty", "other"])
def test_the_keyid_is_a_hint_only(demo_run, tmp_path, keyid):
    envelope = read_envelope(demo_run.attestation)
    if keyid is None:
        envelope["signatures"][0].pop("keyid")
    else:
        envelope["signatures"][0]["keyid"] = keyid
    path = tmp_path / "hint.dsse.json"
    path.write_text(json.dumps(envelope))
    out = _verify(demo_run, path)
    assert out.returncode == 0 and "ok: signature holds for SHA256:" in out.stdout, out.stdout + out.stderr


def test_unpadded_url_safe_base64_is_read(demo_run, tmp_path):
    envelope = read_envelope(demo_run.attestation)
    for holder, key in ((envelope, "payload"), (envelope["signatures"][0], "sig")):
        raw = base64.b64decode(holder[key])
        holder[key] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert "=" not in envelope["signatures"][0]["sig"]
    path = tmp_path / "urlsafe.dsse.json"
    path.write_text(json.dumps(envelope))
    out = _verify(demo_run, path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_statement_signed_by_another_key_names_that_key(demo_run, tmp_path):
    other = tmp_path / "other_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    envelope = read_envelope(demo_run.attestation)
    statement = statement_of(envelope)
    line = (tmp_path / "other_ed25519.pub").read_text().split()
    statement["predicate"]["signer"]["public_key"] = " ".join(line[:2])
    statement["predicate"]["signer"]["ssh_fingerprint"] = "whatever the forger says"
    path = tmp_path / "other.dsse.json"
    path.write_text(json.dumps(resign(envelope, statement, other)))
    out = _verify(demo_run, path)
    printed = subprocess.run(["ssh-keygen", "-lf", f"{other}.pub"], capture_output=True, text=True).stdout.split()[1]
    assert out.returncode == 1 and f"MISMATCH: the envelope is signed by {printed} (the key the statement names), " \
        "not by the key you gave" in out.stdout, out.stdout


def _head(run) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=run.ws, capture_output=True, text=True).stdout.strip()


def test_a_note_is_a_bundle_chosen_by_subject_and_verdict_not_by_order(demo_run, tmp_path):
    copy = demo_run.copy(tmp_path)
    key = copy.pub.with_suffix("")
    envelope = read_envelope(copy.attestation)
    failed = statement_of(envelope)
    failed["predicate"]["result"]["passed"] = False
    failed["predicate"]["run"]["attested_at"] = "2099-01-01T00:00:00Z"  # newer, and last: still not the one chosen
    unknown = {"_type": "https://in-toto.io/Statement/v1", "subject": failed["subject"][:1],
               "predicateType": "https://example.invalid/unknown/v7", "predicate": {"anything": 1}}
    other = statement_of(envelope)
    other["subject"][0]["digest"]["gitCommit"] = "f" * 40  # about another commit: never chosen for HEAD
    for order in ([envelope, resign(envelope, unknown, key), resign(envelope, other, key), resign(envelope, failed, key)],
                  [resign(envelope, failed, key), resign(envelope, unknown, key), envelope]):
        write_note(copy.ws, _head(copy), order)
        out = copy.ns("verify-result", "HEAD", "--key", str(copy.pub))
        assert out.returncode == 0, out.stdout
        assert any(line.startswith("skipped:") and "'https://example.invalid/unknown/v7'" in line and
                   "not checked (the others are)" in line for line in out.stdout.splitlines()), out.stdout
        assert any("1 other nightshift statement(s) about the same commit were not chosen" in line
                   for line in out.stdout.splitlines()), out.stdout


def test_a_newer_minor_version_is_read_and_its_extras_named(demo_run, tmp_path):
    envelope = read_envelope(demo_run.attestation)
    statement = statement_of(envelope)
    predicate = statement["predicate"]
    predicate["version"] = 1.7
    predicate["energy_kwh"] = 3.2
    predicate["comparisons"][0]["units"] = "dimensionless"
    path = tmp_path / "newer.dsse.json"
    path.write_text(json.dumps(resign(envelope, statement, demo_run.pub.with_suffix(""))))
    out = _verify(demo_run, path)
    assert out.returncode == 0, out.stdout
    note = next(line for line in out.stdout.splitlines() if "newer than this nightshift's" in line)
    assert "energy_kwh" in note and "comparisons/0/units" in note, note
    predicate["version"] = 1.2  # our own version with a field it does not define: not of the published form
    path.write_text(json.dumps(resign(envelope, statement, demo_run.pub.with_suffix(""))))
    out = _verify(demo_run, path)
    assert out.returncode == 1 and "MISMATCH: the predicate breaks its schema at (predicate): Additional " \
        "properties are not allowed ('energy_kwh' was unexpected)" in out.stdout, out.stdout
