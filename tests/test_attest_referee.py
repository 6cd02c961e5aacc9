"""The README's own path to a verified done (the user never commits nightshift.toml, CLAUDE.md or the reference),
then a referee's one command on a fresh clone at another path with only the notes fetched: `verify-result COMMIT
--key PUB --rerun` checks what it can (the commit, its config and Definition of done, the figures and the ratchet's
tests by id, measured again) and names what only the run's machine had, with no --allow-missing. Forged claims
about the tests, signed with the trusted key, fail there with a line naming the claim."""
from __future__ import annotations

import json
import subprocess

from tests.fixtures_attest import (fresh_clone, private_env, read_envelope, readme_run, resign,  # noqa: F401
                                   statement_of, write_note)


def _git(ws, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True, check=True).stdout


def test_the_run_commits_what_its_verdicts_rest_on_and_nothing_else_of_the_users(readme_run):
    events = [json.loads(line) for line in (readme_run.run_dir / "events.jsonl").read_text().splitlines()]
    ground = next(e["data"] for e in events if e["type"] == "ground.committed")
    assert sorted(ground["paths"]) == ["CLAUDE.md", "nightshift.toml", "reference/trajectory.dat"]
    created = next(e["data"] for e in events if e["type"] == "run.created")
    assert created["base"] == ground["sha"]  # the run's base is the ground: the agent's commits come after it
    assert "the run's ground" in _git(readme_run.ws, "log", "-1", "--format=%s", ground["sha"])
    assert "scratch.txt" in _git(readme_run.ws, "status", "--porcelain")  # the user's own file: left as it was


def test_a_referee_verifies_the_readme_run_from_a_fresh_clone_with_one_command(readme_run, tmp_path):
    clone = fresh_clone(readme_run.ws, tmp_path / "elsewhere" / "clone")
    referee = private_env(tmp_path / "referee")  # none of the signer's keys or state: only the .pub given
    out = readme_run.ns("verify-result", "HEAD", "--key", str(readme_run.pub), "--rerun", cwd=clone, env=referee,
                        timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert not [line for line in lines if line.startswith(("MISMATCH", "MISSING", "allowed"))], out.stdout
    assert any(line.startswith("elsewhere: the run's event log") for line in lines), out.stdout
    assert "ok: --rerun: the ratchet's 2 test(s) pass again, by id, in the fresh tree" in lines
    assert any(line.startswith("ok: --rerun: trajectory / logistic: worst error") for line in lines)
    assert any(line.startswith("stated by the signer, not checked: environment: python") for line in lines)
    assert lines[-1].startswith("VERIFIED")


def _forged_on_clone(readme_run, tmp_path, change) -> subprocess.CompletedProcess:
    """The signer's own statement changed by ``change`` and re-signed with the trusted key, as the clone's note."""
    clone = fresh_clone(readme_run.ws, tmp_path / "clone")
    commit = _git(clone, "rev-parse", "HEAD").strip()
    envelope = read_envelope(readme_run.attestation)
    statement = statement_of(envelope)
    change(statement["predicate"])
    key = readme_run.pub.with_suffix("")
    write_note(clone, commit, [resign(envelope, statement, key)])
    return readme_run.ns("verify-result", "HEAD", "--key", str(readme_run.pub), "--rerun", cwd=clone,
                         env=private_env(tmp_path / "referee"), timeout=240)


def test_forged_test_ids_signed_by_the_trusted_key_fail_when_run_again(readme_run, tmp_path):
    def more_tests(p):
        p["tests"]["ratchet"]["ids"] = p["tests"]["ratchet"]["ids"] + ["tests/test_solver.py::test_conserves_energy"]
    out = _forged_on_clone(readme_run, tmp_path, more_tests)
    assert out.returncode == 1, out.stdout
    assert "MISMATCH: --rerun: test tests/test_solver.py::test_conserves_energy of the attested ratchet's set did " \
           "not pass (not run)" in out.stdout.splitlines(), out.stdout


def test_a_forged_test_count_signed_by_the_trusted_key_fails_when_run_again(readme_run, tmp_path):
    def boast(p):
        p["tests"]["summary"] = "999 passed"
    out = _forged_on_clone(readme_run, tmp_path, boast)
    assert out.returncode == 1, out.stdout
    assert "MISMATCH: claim tests.summary says 999 passed; run again in the fresh tree, 2 passed" in \
        out.stdout.splitlines(), out.stdout
