"""Attestations end to end: a demo run that ends verified done writes a signed in-toto attestation beside the run and
as a git note; `nightshift verify-result` accepts it, finds and names one changed byte in the envelope, a candidate
or a reference, and with --rerun measures the figures again in a fresh tree of a clean clone; an independent DSSE
verifier accepts the envelope and the predicate validates against the published schema."""
from __future__ import annotations

import base64
import json
import os
import stat
import subprocess

import jsonschema

from nightshift.supervisor.attest.statement import PREDICATE_TYPE, SCHEMA_FILE
from tests.fixtures_attest import (demo_run, independent_verify, read_envelope, reseal_unsigned,  # noqa: F401
                                   statement_of)


def _flip(path, offset: int = -10) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_verified_done_writes_a_signed_attestation_beside_the_run_and_as_a_git_note(demo_run):
    events = [json.loads(line) for line in (demo_run.run_dir / "events.jsonl").read_text().splitlines()]
    written = [e["data"] for e in events if e["type"] == "attest.written"]
    assert len(written) == 1 and written[0]["signed"] and written[0]["note"] and written[0]["verdict"] == 2
    assert [e["type"] for e in events][-2:] == ["attest.written", "run.finished"]
    assert stat.S_IMODE(demo_run.attestation.stat().st_mode) == 0o600
    statement = statement_of(read_envelope(demo_run.attestation))
    commit = [e["data"]["head"] for e in events if e["type"] == "commit.created"][-1]
    assert statement["subject"][0] == {"name": "commit", "digest": {"gitCommit": commit}}
    assert {"name": "out/trajectory.dat"} .items() <= statement["subject"][1].items()
    predicate = statement["predicate"]
    assert predicate["result"]["passed"] is True and predicate["commit"] == commit
    comp = predicate["comparisons"][0]
    assert comp["reference"]["sha256"] and comp["columns"][0]["rtol"] == 1e-6 and comp["columns"][0]["where"]
    assert predicate["environment"]["python"] and predicate["environment"]["numpy"]
    assert predicate["judge"] == {"asked": False, "verdict": "not asked"}
    note = subprocess.run(["git", "notes", "--ref=refs/notes/nightshift", "show", commit], cwd=demo_run.ws,
                          capture_output=True, text=True)
    lines = [json.loads(line) for line in note.stdout.splitlines()]
    assert note.returncode == 0 and lines[0]["payload"] == read_envelope(demo_run.attestation)["payload"]
    assert [statement_of(line)["predicateType"] for line in lines[1:]] == [  # the standards' statements beside ours
        "https://in-toto.io/attestation/test-result/v0.1", "https://slsa.dev/verification_summary/v1"]
    report = demo_run.ns("report", str(demo_run.run_dir))
    fingerprint = predicate["signer"]["ssh_fingerprint"]
    assert report.returncode == 0 and fingerprint in report.stdout and str(demo_run.attestation) in report.stdout
    page = (demo_run.run_dir / "report.html").read_text()
    assert "id=attestation" in page and demo_run.attestation.resolve().as_uri() in page and fingerprint in page


def test_the_attestation_verifies_from_its_file_and_from_the_commit(demo_run):
    by_file = demo_run.ns("verify-result", str(demo_run.attestation), "--key", str(demo_run.pub))
    assert by_file.returncode == 0, by_file.stdout + by_file.stderr
    assert "VERIFIED" in by_file.stdout and "MISMATCH" not in by_file.stdout
    assert "candidate out/trajectory.dat" in by_file.stdout and "event log" in by_file.stdout
    assert "ok: CLAUDE.md's Definition of done at" in by_file.stdout
    by_commit = demo_run.ns("verify-result", "HEAD", "--key", str(demo_run.pub))
    assert by_commit.returncode == 0, by_commit.stdout + by_commit.stderr


def test_an_independent_dsse_verifier_accepts_it_and_the_predicate_validates_against_the_schema(demo_run):
    envelope = read_envelope(demo_run.attestation)
    public = demo_run.pub.read_text().split(" nightshift")[0].strip()
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert independent_verify(envelope, public)
    statement = statement_of(envelope)
    assert statement["_type"] == "https://in-toto.io/Statement/v1" and statement["predicateType"] == PREDICATE_TYPE
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(statement["predicate"], schema)
    forged = dict(envelope, payload=base64.b64encode(base64.b64decode(envelope["payload"]).replace(
        b'"passed":true', b'"passed":false', 1)).decode())
    assert not independent_verify(forged, public)


def test_one_changed_byte_in_the_envelope_is_found_and_named(demo_run, tmp_path):
    copy = demo_run.copy(tmp_path)
    envelope = read_envelope(copy.attestation)
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[5] ^= 0x01
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    copy.attestation.write_text(json.dumps(envelope))
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    assert out.returncode == 1 and "MISMATCH: the signature does not hold" in out.stdout, out.stdout
    payload = bytearray(base64.b64decode(read_envelope(demo_run.attestation)["payload"]))
    at = payload.index(b'"goal":"') + 9
    payload[at] ^= 0x01  # one byte of the goal's text
    envelope = read_envelope(demo_run.attestation)
    envelope["payload"] = base64.b64encode(bytes(payload)).decode()
    copy.attestation.write_text(json.dumps(envelope))
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    assert out.returncode == 1 and "MISMATCH: the signature does not hold" in out.stdout, out.stdout


def test_one_changed_byte_in_a_candidate_or_a_reference_is_found_and_named(demo_run, tmp_path):
    copy = demo_run.copy(tmp_path / "candidate")
    _flip(copy.ws / "out" / "trajectory.dat")
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    lines = [line for line in out.stdout.splitlines() if line.startswith("MISMATCH")]
    assert out.returncode == 1 and len(lines) == 1 and "candidate out/trajectory.dat" in lines[0], out.stdout
    copy = demo_run.copy(tmp_path / "reference")
    _flip(copy.ws / "reference" / "trajectory.dat")
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    lines = [line for line in out.stdout.splitlines() if line.startswith("MISMATCH")]
    assert out.returncode == 1 and len(lines) == 1 and "reference reference/trajectory.dat" in lines[0], out.stdout
    copy = demo_run.copy(tmp_path / "deleted")
    (copy.ws / "out" / "trajectory.dat").unlink()
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    lines = [line for line in out.stdout.splitlines() if line.startswith(("MISMATCH", "MISSING"))]
    assert out.returncode == 1 and len(lines) == 1 and "MISSING: candidate out/trajectory.dat" in lines[0], out.stdout
    copy = demo_run.copy(tmp_path / "linked")  # a candidate swapped for a link to the reference: never followed
    (copy.ws / "out" / "trajectory.dat").unlink()
    (copy.ws / "out" / "trajectory.dat").symlink_to(copy.ws / "reference" / "trajectory.dat")
    out = copy.ns("verify-result", str(copy.attestation), "--key", str(copy.pub))
    assert out.returncode == 1 and "MISMATCH: candidate out/trajectory.dat: cannot be read as a plain file" in \
        out.stdout, out.stdout


def test_rerun_on_a_clean_clone_confirms_every_figure(demo_run, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(demo_run.ws), str(clone)], check=True)
    subprocess.run(["git", "fetch", "-q", "origin", "refs/notes/nightshift:refs/notes/nightshift"], cwd=clone,
                   check=True)
    assert not (clone / "out").exists()  # the candidates are not in git: only a rerun can make them
    commit = statement_of(read_envelope(demo_run.attestation))["predicate"]["commit"]
    out = demo_run.ns("verify-result", commit, "--key", str(demo_run.pub), "--rerun", "--allow-missing",
                      "event-log", "--dir", str(clone), cwd=clone, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok: --rerun: trajectory / logistic: worst error" in out.stdout
    assert "ok: --rerun: trajectory / forced: worst error" in out.stdout
    assert "allowed: the run's event log" in out.stdout
    assert not (clone / "out").exists()  # the rerun ran in a fresh tree of its own, not in the clone


def test_a_forged_claim_about_a_failing_commit_is_measured_and_refused(demo_run, tmp_path):
    """What an agent without the key could write: the passing statement, pointed at the Euler commit, unsigned. The
    digests of the files it names still match, but measuring the commit's figures again shows it fails."""
    copy = demo_run.copy(tmp_path)
    envelope = read_envelope(copy.attestation)
    statement = statement_of(envelope)
    log = subprocess.run(["git", "log", "--format=%H %s"], cwd=copy.ws, capture_output=True, text=True).stdout
    euler = next(line.split()[0] for line in log.splitlines() if "turn 1: FAIL" in line)
    statement["predicate"]["commit"] = euler
    statement["subject"][0]["digest"]["gitCommit"] = euler
    statement["predicate"]["signer"] = None
    forged = tmp_path / "forged.dsse.json"
    forged.write_text(json.dumps(reseal_unsigned(envelope, statement)))
    out = copy.ns("verify-result", str(forged), "--rerun", "--dir", str(copy.ws), "--allow-missing",
                  "signature", timeout=180)
    assert out.returncode == 1, out.stdout
    assert "allowed: the envelope is unsigned" in out.stdout
    mismatches = [line for line in out.stdout.splitlines() if line.startswith("MISMATCH")]
    assert any("--rerun: trajectory / logistic: worst error" in line and "over the tolerance" in line
               for line in mismatches), out.stdout
    assert os.path.exists(copy.attestation)  # nothing of the run was touched
