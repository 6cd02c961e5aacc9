"""`verify-result --rerun`, the tests: the commit's test command run in the fresh tree, inside nightshift's namespace
(as the verdict ran it), asking pytest for per-test results, and every test id of the attested ratchet's set must
pass again. A claimed "N passed" is then a measurement, not the signer's word. Without ids (a runner that gives
none) the claim stays the signer's, said so.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.findings import Findings

SHOWN = 10


def rerun_tests(predicate: dict[str, Any], config, tree: Path, folder: Path, found: Findings) -> None:
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.verify.checks import run_tests
    tests = predicate.get("tests") or {}
    ids = (tests.get("ratchet") or {}).get("ids")
    command = config.verify.test_command
    if not command or not ids:
        if tests.get("passed") is not None:
            found.note("--rerun: the tests are not run again (no test command, or the attested ratchet names no "
                       "test ids)")
        return
    out = folder / "tests"
    out.mkdir(parents=True, exist_ok=True)
    # "auto" whatever the commit's [policy] says, as for the oracle: the commit may not turn the namespace off
    boundary = dataclasses.replace(boundary_for(tree, config), mode="auto")
    ran = run_tests(command, tree, config.verify.timeout, out, True, boundary)
    found.claim("tests.ids", "tests.passed", "tests.summary")
    if not ran.results:
        found.mismatch(f"--rerun: the test command `{command}` gave no per-test results (status {ran.status}): the "
                       f"ratchet's {len(ids)} test(s) could not be run again by id")
        return
    failed = [(t, (ran.results.get(t) or {}).get("outcome", "not run")) for t in ids
              if (ran.results.get(t) or {}).get("outcome") != "passed"]
    for test_id, outcome in failed[:SHOWN]:
        found.mismatch(f"--rerun: test {test_id} of the attested ratchet's set did not pass ({outcome})")
    if len(failed) > SHOWN:
        found.mismatch(f"--rerun: and {len(failed) - SHOWN} more test(s) of the ratchet's set did not pass")
    if not failed:
        found.ok(f"--rerun: the ratchet's {len(ids)} test(s) pass again, by id, in the fresh tree")
    said = re.search(r"(\d+) passed", str(tests.get("summary") or ""))
    passed_now = sum((r or {}).get("outcome") == "passed" for r in ran.results.values())
    if said and int(said.group(1)) != passed_now:
        found.mismatch(f"claim tests.summary says {said.group(1)} passed; run again in the fresh tree, {passed_now} "
                       "passed")
