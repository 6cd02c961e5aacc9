"""Forgers who hold the trusted key: each claim of the signer's own statement changed and re-signed with that key
(the signature holds), on the run's machine and without --rerun. Each is found and named by the claim it forged:
a zeroed subject digest, a tolerance the committed nightshift.toml does not set, a test count the event log does not
hold, nightshift's version against its own source, the failing verdict's commit, the goal, the Definition of done's
items, a judge that was never asked."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.fixtures_attest import demo_run, read_envelope, resign, statement_of  # noqa: F401


def _forge(demo_run, tmp_path, change):
    envelope = read_envelope(demo_run.attestation)
    statement = statement_of(envelope)
    change(statement)
    forged = tmp_path / "forged.dsse.json"
    forged.write_text(json.dumps(resign(envelope, statement, demo_run.pub.with_suffix(""))))
    out = demo_run.ns("verify-result", str(forged), "--key", str(demo_run.pub), "--dir", str(demo_run.ws))
    assert "ok: signature holds" in out.stdout, out.stdout  # the key is the trusted one: only the claims can fail
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("MISMATCH")]


def _euler(demo_run) -> str:
    log = subprocess.run(["git", "log", "--format=%H %s"], cwd=demo_run.ws, capture_output=True, text=True).stdout
    return next(line.split()[0] for line in log.splitlines() if "turn 1: FAIL" in line)


def _zero_candidate(s):
    s["subject"][1]["digest"]["sha256"] = "0" * 64


def _zero_commit(s):
    s["subject"][0]["digest"]["gitCommit"] = "0" * 40


def _rtol(s):
    s["predicate"]["comparisons"][0]["columns"][0]["rtol"] = 0.5


def _tests(s):
    s["predicate"]["tests"]["summary"] = "999 passed"


def _version(s):
    s["predicate"]["environment"]["nightshift"] = "9.9"


def _goal(s):
    s["predicate"]["goal"] = "agree with CLASS to 1e-9"


def _items(s):
    s["predicate"]["definition_of_done"]["items"] = ["nothing at all"]


def _judge(s):
    s["predicate"]["judge"] = {"asked": True, "verdict": "pass", "model": "claude-opus", "via": "api",
                               "criteria": 3}


@pytest.mark.parametrize("change, named", [
    (_zero_candidate, "subject out/trajectory.dat: sha256 0000000000000000… is no candidate digest"),
    (_zero_commit, "subject commit's digest is not {gitCommit:"),
    (_rtol, "claim comparisons[trajectory].columns[logistic].rtol = 0.5 is not what nightshift.toml at"),
    (_tests, "claim tests.summary = '999 passed' is not what the event log says"),
    (_version, "claim environment.nightshift = '9.9', but the attested source"),
    (_goal, "claim goal = 'agree with CLASS to 1e-9' is not what nightshift.toml at"),
    (_items, "claim definition_of_done.items is not the list CLAUDE.md at"),
    (_judge, "claim judge.verdict = 'pass' is not what the event log says ('not asked')"),
], ids=["subject-candidate", "subject-commit", "rtol", "tests", "version", "goal", "dod-items", "judge"])
def test_a_forged_claim_signed_by_the_trusted_key_is_named(demo_run, tmp_path, change, named):
    mismatches = _forge(demo_run, tmp_path, change)
    assert any(named in line for line in mismatches), mismatches


def test_the_failing_verdicts_commit_swapped_in_is_named_without_rerun(demo_run, tmp_path):
    euler = _euler(demo_run)

    def swap(s):
        s["predicate"]["commit"] = euler
        s["subject"][0]["digest"]["gitCommit"] = euler
    mismatches = _forge(demo_run, tmp_path, swap)
    assert any(f"claim result.passed = True on commit {euler[:12]}, but commit {euler[:12]}'s message "
               "(nightshift's: shift 1 turn 1: FAIL)" in line for line in mismatches), mismatches
    assert any(line.startswith("MISMATCH: claim commit = ") and "is not what the event log says" in line
               for line in mismatches), mismatches


def test_claims_no_file_here_holds_are_listed_as_the_signers_word(demo_run):
    out = demo_run.ns("verify-result", str(demo_run.attestation), "--key", str(demo_run.pub))
    stated = [line for line in out.stdout.splitlines() if line.startswith("stated by the signer, not checked: ")]
    assert out.returncode == 0 and stated, out.stdout
    assert any("comparisons.figures" in line and "--rerun measures them" in line for line in stated)
    assert any(line.startswith("stated by the signer, not checked: environment: python") for line in stated)
    assert "rest on the signer's word (listed)" in out.stdout.splitlines()[-1]
