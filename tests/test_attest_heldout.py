"""Attestations of a run with a held-out comparison, by a scripted command agent: a verdict that passed, one that
regressed, and the verified done. Attested on demand, the regressed verdict says failed and does not verify; the
held-out comparison carries only pass/fail, its reference's digest and the bits released (no figure); a checker
without the held-out reference is told which comparison it could not check and does not get exit 0 unless it
accepts that by name; one who has it (found by digest) re-runs it. Without any key the attestation is unsigned
and says so."""
from __future__ import annotations

import json
import shutil

from tests.fixtures_attest import private_env, read_envelope, statement_of
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_namespace import HONEST, need_namespace, oracle_block, run_until_it_rests, setup_references

REGRESSED = HONEST + ("rows = open('out/result.dat').read().splitlines()\n"
                      "x, y = rows[5].split()\nrows[5] = f'{x} {float(y) * 1.001:.10f}'\n"
                      "open('out/result.dat', 'w').write('\\n'.join(rows) + '\\n')\n")


def test_passed_then_regressed_verdict_attested_on_demand_says_failed_and_heldout_figures_stay_out(
        workspace, tmp_path, monkeypatch):
    need_namespace()
    for name, value in private_env(tmp_path / "who").items():
        monkeypatch.setenv(name, value)
    held = setup_references(workspace.path, tmp_path)
    script = {"s1t1": [["write", "solver.py", HONEST], ["write", "check.txt", "ok"]],  # passes, no claim
              "s1t2": [["write", "solver.py", REGRESSED]],  # regressed
              "s1t3": [["write", "solver.py", HONEST], ["claim", "done", "honest again"]]}
    workspace.configure(script, backend="local", max_shifts=1, extra=oracle_block(str(held)))
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    verdicts = [e["data"]["passed"] for e in workspace.events(run) if e["type"] == "verify.finished"]
    assert verdicts == [True, False, True], verdicts
    ws = workspace.path

    regressed = nightshift("attest", run.run_id, "--verdict", "2", cwd=ws)
    assert regressed.returncode == 0 and "verdict 2 (FAILED)" in regressed.stdout and "UNSIGNED" in regressed.stdout
    second = run.root / "attestations" / "verdict-2.dsse.json"
    assert statement_of(read_envelope(second))["predicate"]["result"]["passed"] is False
    check = nightshift("verify-result", str(second), "--allow-missing", "signature", cwd=ws)
    assert check.returncode == 1 and "MISMATCH: the attested verdict FAILED" in check.stdout, check.stdout
    first = nightshift("attest", run.run_id, "--verdict", "1", cwd=ws)
    assert first.returncode == 0 and "verdict 1 (PASSED)" in first.stdout

    done = run.root / "attestations" / "verdict-3.dsse.json"  # written by the supervisor at the verified done
    envelope = read_envelope(done)
    assert envelope["signatures"] == []
    predicate = statement_of(envelope)["predicate"]
    assert predicate["signer"] is None
    heldout = next(c for c in predicate["comparisons"] if c["heldout"])
    assert set(heldout) == {"name", "heldout", "passed", "reference", "released_bits"} and heldout["passed"] is True
    state = json.loads(run.snapshot.read_text())["state"]
    assert heldout["released_bits"] == predicate["heldout"]["bits_released"] == state["heldout"]["bits"] > 0
    assert len(heldout["reference"]["sha256"]) == 64
    private = json.dumps(json.loads(next((tmp_path / "who" / "state").rglob("*-t3.oracle.json")).read_text()))
    columns = next(c for c in json.loads(private)["comparisons"] if c["name"] == "held")["columns"]
    worst = float(max(columns, key=lambda c: float(c["ratio"]))["rel_worst"])
    said = json.dumps(statement_of(envelope))
    assert worst > 0 and repr(worst) not in said and f"{worst:.6g}" not in said and f"{worst:.4g}" not in said

    unsigned = nightshift("verify-result", str(done), cwd=ws)
    assert unsigned.returncode == 3 and "UNSIGNED: the envelope is unsigned" in unsigned.stdout, unsigned.stdout
    mine = nightshift("verify-result", str(done), "--allow-missing", "signature", cwd=ws)
    assert mine.returncode == 0 and "held-out reference of held: found by digest" in mine.stdout, mine.stdout

    referee = private_env(tmp_path / "referee")  # a checker without nightshift's private store of held-out copies
    without = nightshift("verify-result", str(done), "--allow-missing", "signature", cwd=ws, env=referee)
    assert without.returncode == 1, without.stdout
    missing = [line for line in without.stdout.splitlines() if line.startswith("MISSING")]
    assert len(missing) == 1 and "held-out reference of held" in missing[0] and "--allow-missing held" in missing[0]
    allowed = nightshift("verify-result", str(done), "--allow-missing", "signature,held", cwd=ws, env=referee)
    assert allowed.returncode == 0, allowed.stdout
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    shutil.copy(held, theirs / "some-other-name.dat")
    found = nightshift("verify-result", str(done), "--allow-missing", "signature", "--references", str(theirs),
                       "--rerun", cwd=ws, env=referee, timeout=180)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "ok: --rerun: held-out held passes again" in found.stdout and "ok: --rerun: result / y" in found.stdout
