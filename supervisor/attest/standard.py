"""The standard statements kept beside nightshift's own, in the same note (and the run's bundle file), so tools that
know only the standards read the result: an in-toto test-result v0.1 statement for the tests (subject the commit,
configuration the nightshift.toml blob at it, passedTests the ratchet's ids) and a SLSA Verification Summary
(VSA v1: nightshift as the verifier, resourceUri repo@commit, the policy = nightshift.toml and the Definition of
done by digest, the verdict). Nightshift's own predicate stays the one with the figures and tolerances.

Their check holds each field to what nightshift's own statement says (and that one to the commit, checks.py).
"""
from __future__ import annotations

from typing import Any

from nightshift.supervisor.attest.bundle import STATEMENT_TYPE, TEST_RESULT, VSA, Item
from nightshift.supervisor.attest.findings import Findings

VERIFIER_ID = "https://nightshift.invalid/verifier/v1"


def resource_uri(repository: str | None, commit: str) -> str:
    return f"{repository}@{commit}" if repository else f"git+commit:{commit}"


def _commit_subject(statement: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in statement["subject"] if s.get("name") == "commit"]


def test_result(statement: dict[str, Any]) -> dict[str, Any]:
    """The in-toto test-result v0.1 statement of our own ``statement``'s tests."""
    p = statement["predicate"]
    tests = p["tests"]
    ids = sorted((tests.get("ratchet") or {}).get("ids") or [])
    result = "PASSED" if tests.get("passed") else ("FAILED" if tests.get("passed") is False else "WARNED")
    config = {"name": p["oracle"]["config_file"], "digest": {"sha256": p["oracle"]["config_sha256"]}} \
        if p["oracle"].get("config_sha256") else {"name": p["oracle"]["config_file"]}
    predicate = {"result": result, "configuration": [config], "passedTests": ids if result == "PASSED" else [],
                 "warnedTests": sorted(tests.get("flaky") or []), "failedTests": [] if result == "PASSED" else ids}
    return {"_type": STATEMENT_TYPE, "subject": _commit_subject(statement), "predicateType": TEST_RESULT,
            "predicate": predicate}


def vsa(statement: dict[str, Any], repository: str | None) -> dict[str, Any]:
    """The SLSA VSA v1 statement of our own ``statement``'s verdict."""
    p = statement["predicate"]
    policy = {"sha256": p["oracle"].get("config_sha256") or ""}
    if p["definition_of_done"].get("sha256"):
        policy["nightshift-dod-sha256"] = p["definition_of_done"]["sha256"]
    # verifier: the id only (the official bindings' Verifier has no version; nightshift's is in its own predicate)
    predicate = {"verifier": {"id": VERIFIER_ID},
                 "timeVerified": p["run"].get("verified_at") or p["run"]["attested_at"],
                 "resourceUri": resource_uri(repository, p["commit"]),
                 "policy": {"uri": f"{p['oracle']['config_file']}@{p['commit']}", "digest": policy},
                 "verificationResult": "PASSED" if p["result"]["passed"] else "FAILED",
                 "verifiedLevels": ["NIGHTSHIFT_VERIFIED_RESULT_V1"]}
    return {"_type": STATEMENT_TYPE, "subject": _commit_subject(statement), "predicateType": VSA,
            "predicate": predicate}


def check_companions(items: list[Item], statement: dict[str, Any], signer, found: Findings) -> None:
    """Each standard statement beside ours: signed by the same key, and saying what ours says."""
    ours = {TEST_RESULT: test_result, VSA: lambda s: vsa(s, _uri(s))}
    for item in items:
        want = ours[item.kind](statement)["predicate"]
        got = item.statement.get("predicate") if isinstance(item.statement.get("predicate"), dict) else {}
        label = "test-result" if item.kind == TEST_RESULT else "SLSA VSA"
        if signer is not None and not item.envelope.signed_by(signer):
            found.mismatch(f"the {label} statement ({item.where}) is not signed by the key that signed nightshift's")
            continue
        wrong = [k for k in want if k != "timeVerified" and got.get(k) != want[k]]
        if item.statement.get("subject") != _commit_subject(statement):
            wrong.insert(0, "subject")
        if wrong:
            found.mismatch(f"the {label} statement ({item.where}) says otherwise than nightshift's own about: "
                           f"{', '.join(wrong)}")
        else:
            found.ok(f"the {label} statement beside it says the same ({item.kind})")


def _uri(statement: dict[str, Any]) -> str | None:
    return next((s.get("uri") for s in _commit_subject(statement) if s.get("uri")), None)
