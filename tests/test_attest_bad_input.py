"""Bad input to `nightshift attest` and `nightshift verify-result`: no key, a key file that is not there, a key with
a passphrase and no agent (and the same key through a real ssh-agent), a key that exists already, a verdict that
does not exist, a tampered envelope, a statement about a commit the repository does not have, a key that did not
sign it. Each is one line and a non-zero exit, no traceback, and nothing written over."""
from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from tests.fixtures_attest import (demo_run, independent_verify, private_env, read_envelope,  # noqa: F401
                                   reseal_unsigned, statement_of)
from tests.fixtures_core import require_tool


@pytest.fixture(autouse=True)
def openssh():
    for tool in ("ssh-keygen", "ssh-agent", "ssh-add"):
        require_tool(tool)


def one_line_error(out, *words: str) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nightshift: ") and "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_key_problems_are_one_line_and_write_nothing_over(demo_run, tmp_path):
    copy = demo_run.copy(tmp_path)
    before = copy.attestation.read_bytes()
    one_line_error(copy.ns("attest", str(copy.run_dir), "--key", str(tmp_path / "nope")), "--key", "no such file",
                   "--new-key")
    locked = tmp_path / "locked_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(locked)], check=True)
    one_line_error(copy.ns("attest", str(copy.run_dir), "--key", str(locked)), "has a passphrase",
                   "no ssh-agent holds it", "ssh-add")
    rsa = tmp_path / "id_rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True)
    one_line_error(copy.ns("attest", str(copy.run_dir), "--key", str(rsa)), "not an ed25519 key")
    one_line_error(copy.ns("attest", "--new-key"), "already exists", "nothing was written over")
    one_line_error(copy.ns("attest", str(copy.run_dir), "--verdict", "9"), "verdicts 1 to 2", "--verdict 9")
    nobody = private_env(tmp_path / "nobody")  # no key anywhere: unsigned would replace a signed one
    one_line_error(copy.ns("attest", str(copy.run_dir), env=nobody), "is signed", "nothing was written")
    assert copy.attestation.read_bytes() == before


def test_a_key_with_a_passphrase_signs_through_a_running_ssh_agent(demo_run, tmp_path):
    copy = demo_run.copy(tmp_path)
    locked = tmp_path / "locked_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(locked)], check=True)
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    try:
        askpass = tmp_path / "askpass.sh"
        askpass.write_text("#!/bin/sh\necho 'a passphrase'\n")
        askpass.chmod(0o700)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock), "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force",
               "DISPLAY": ":0"}
        from tests.fixtures_core import wait_for
        wait_for(lambda: sock.exists(), timeout=30, what="ssh-agent's socket")
        subprocess.run(["ssh-add", str(locked)], env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
        out = copy.ns("attest", str(copy.run_dir), "--key", str(locked), env={"SSH_AUTH_SOCK": str(sock)})
        assert out.returncode == 0 and "signed by SHA256:" in out.stdout, out.stdout + out.stderr
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
    envelope = read_envelope(copy.attestation)
    assert statement_of(envelope)["predicate"]["signer"]["via"] == "ssh-agent"
    public = (tmp_path / "locked_ed25519.pub").read_text().split()[:2]
    assert independent_verify(envelope, " ".join(public))
    checked = copy.ns("verify-result", str(copy.attestation), "--key", str(tmp_path / "locked_ed25519.pub"))
    assert checked.returncode == 0, checked.stdout


def test_a_tampered_envelope_is_one_line(demo_run, tmp_path):
    bad = tmp_path / "bad.dsse.json"
    bad.write_text(demo_run.attestation.read_text()[:-20])
    one_line_error(demo_run.ns("verify-result", str(bad)), "is not JSON")
    envelope = read_envelope(demo_run.attestation)
    bad.write_text(json.dumps(dict(envelope, payload="%%%" + envelope["payload"][3:])))
    one_line_error(demo_run.ns("verify-result", str(bad)), "not a DSSE envelope")
    bad.write_text(json.dumps(dict(envelope, payloadType="text/plain")))
    one_line_error(demo_run.ns("verify-result", str(bad)), "payloadType")
    one_line_error(demo_run.ns("verify-result", "0123abcd"), "neither a file nor a commit")


def test_a_statement_about_a_commit_not_in_the_repository_and_a_key_that_did_not_sign(demo_run, tmp_path):
    envelope = read_envelope(demo_run.attestation)
    statement = statement_of(envelope)
    statement["predicate"]["commit"] = "1234567890" * 4
    statement["subject"][0]["digest"]["gitCommit"] = "1234567890" * 4
    forged = tmp_path / "elsewhere.dsse.json"
    forged.write_text(json.dumps(reseal_unsigned(envelope, statement)))
    out = demo_run.ns("verify-result", str(forged), "--dir", str(demo_run.ws), "--allow-missing", "signature")
    assert out.returncode == 1
    assert any(line.startswith("MISMATCH: commit 123456789012 is not in the repository") for line in
               out.stdout.splitlines()), out.stdout
    other = tmp_path / "other_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    wrong = demo_run.ns("verify-result", str(demo_run.attestation), "--key", f"{other}.pub")
    assert wrong.returncode == 1 and "MISMATCH: the envelope is signed by SHA256:" in wrong.stdout and \
        "(the key the statement names), not by the key you gave" in wrong.stdout, wrong.stdout
    referee = demo_run.ns("verify-result", str(demo_run.attestation), env=private_env(tmp_path / "referee"))
    assert referee.returncode == 1 and "a key you did not name: give the signer's public key with --key" in \
        referee.stdout, referee.stdout
    bad_key = tmp_path / "garbage.pub"
    bad_key.write_text("ssh-ed25519 not-base64\n")
    out = demo_run.ns("verify-result", str(demo_run.attestation), "--key", str(bad_key))
    assert out.returncode == 2 and out.stderr.startswith("nightshift: ") and "Traceback" not in out.stderr


def test_a_statement_that_breaks_the_schema_is_named_and_not_read_further(demo_run, tmp_path):
    envelope = read_envelope(demo_run.attestation)
    statement = statement_of(envelope)
    statement["predicate"]["comparisons"] = [{"name": 7, "candidate": "../../etc/passwd"}]
    statement["predicate"]["signer"] = "me"
    forged = tmp_path / "odd.dsse.json"
    forged.write_text(json.dumps(reseal_unsigned(envelope, statement)))
    out = demo_run.ns("verify-result", str(forged), "--dir", str(demo_run.ws))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert any(line.startswith("MISMATCH: the predicate breaks its schema at comparisons/0") for line in
               out.stdout.splitlines()), out.stdout
    assert not any(line.startswith(("ok: candidate", "ok: reference")) for line in out.stdout.splitlines())


def test_an_unsigned_attestation_is_reported_as_unsigned_not_as_not_verified(demo_run, tmp_path):
    """`verify-result` as the report suggests it answered NOT VERIFIED only because the attestation was unsigned.
    nightshift's own unsigned attestation (`attest --key none`) whose every claim holds is UNSIGNED (exit 3): what it
    still proves and what it does not; accepted by name it is VERIFIED (0). Still NOT VERIFIED (1): a signed one
    whose signature was taken off, an unsigned one checked against a key you gave, an unsigned one that lies."""
    copy = demo_run.copy(tmp_path)
    copy.attestation.unlink()
    made = copy.ns("attest", str(copy.run_dir), "--verdict", "2", "--key", "none")
    assert made.returncode == 0 and "UNSIGNED" in made.stdout, made.stdout + made.stderr
    out = copy.ns("verify-result", str(copy.attestation))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "NOT VERIFIED" not in out.stdout and "MISMATCH" not in out.stdout and "MISSING" not in out.stdout
    assert "UNSIGNED: the envelope is unsigned" in out.stdout
    assert "UNSIGNED: every claim checked above holds, but no key signed this attestation (exit 3)" in out.stdout
    assert "  it proves: the commit, its nightshift.toml" in out.stdout
    assert "  it does not prove: who wrote it" in out.stdout and "--rerun measures them again" in out.stdout
    assert any(line.startswith("ok: candidate") for line in out.stdout.splitlines()), out.stdout
    accepted = copy.ns("verify-result", str(copy.attestation), "--allow-missing", "signature")
    assert accepted.returncode == 0 and "VERIFIED: the signature" in accepted.stdout, accepted.stdout
    keyed = copy.ns("verify-result", str(copy.attestation), "--key", str(demo_run.pub))
    assert keyed.returncode == 1 and "nothing in it is signed by the key you gave" in keyed.stdout, keyed.stdout

    signed = read_envelope(demo_run.attestation)
    stripped = tmp_path / "stripped.dsse.json"
    stripped.write_text(json.dumps(dict(signed, signatures=[])))  # the statement as signed, its signature gone
    out = demo_run.ns("verify-result", str(stripped), "--dir", str(demo_run.ws))
    assert out.returncode == 1 and "NOT VERIFIED" in out.stdout, out.stdout
    assert "but the envelope carries no signature: it was removed" in out.stdout
    statement = statement_of(signed)
    statement["predicate"]["signer"] = None
    statement["predicate"]["commit"] = statement["subject"][0]["digest"]["gitCommit"] = "1234567890" * 4
    lie = tmp_path / "lie.dsse.json"
    lie.write_text(json.dumps(reseal_unsigned(signed, statement)))
    out = demo_run.ns("verify-result", str(lie), "--dir", str(demo_run.ws))
    assert out.returncode == 1 and "NOT VERIFIED" in out.stdout and "UNSIGNED: every claim" not in out.stdout
