"""run_oracle end to end on real files and real commands: the command (output kept, timeout, failure, stale
outputs), bad input that becomes failing entries, the summary and push-back, reference tamper detection and
restore, held-out secrecy, the fast oracle, and strict JSON reports."""
from __future__ import annotations

import json
import os
import sys

import numpy as np

from nightshift.supervisor.verify.oracle import heldout_store, protect_references, run_oracle
from nightshift.supervisor.verify.oracle.exam import UNAVAILABLE, Exam, private_folder
from nightshift.supervisor.verify.oracle.integrity import sha256_of
from nightshift.supervisor.verify.oracle.report import fmt
from tests.fixtures_oracle import all_text_under, oracle, perturb, spectrum, write_table

HEADER = "# 1:l 2:TT 3:EE 4:TE"
REF = spectrum(200)
SOLVED = REF.copy()
SOLVED[:, 1:] *= 1 + 1e-12  # what a solver computes: equal to the reference to 12 digits, not a copy of it


def entry(**kw):
    return {"name": "cl", "candidate": "out/cl.dat", "reference": "reference/cl.dat", "x": "l", **kw}


def setup(ws, candidate=SOLVED):
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)  # a stand-in solver's output, copied by the commands
    if candidate is not None:
        write_table(ws / "out" / "cl.dat", candidate, HEADER)
    return ws


def strict_load(path):
    return json.loads(path.read_text(), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def test_passing_run_writes_a_strict_json_report(tmp_path):
    ws = setup(tmp_path / "ws")
    out = run_oracle(oracle(entry(rtol=1e-9)), ws, tmp_path / "o", None)
    assert out.passed and out.metric < 1e-2 and list(out.metrics) == ["cl"] and out.pushback == []
    assert out.summary.startswith("oracle: all 1 comparisons pass")
    report = strict_load(tmp_path / "o" / "oracle.json")
    assert report["passed"] and report["comparisons"][0]["columns"][0]["points"] == 200


def test_failing_run_quotes_the_worst_offenders(tmp_path):
    bad = REF.copy()
    bad[0, 1] *= 1.032
    bad[:, 3] = np.nan
    ws = setup(tmp_path / "ws", bad)
    out = run_oracle(oracle(entry(rtol=1e-3, columns=["TT", "EE", "TE"])), ws, tmp_path / "o", None)
    assert not out.passed and out.metric == np.inf
    te, tt = REF[0, 3], REF[0, 1]
    # a NaN is said as NaN beside the reference's value there, counted: never "nan > rtol" or an infinite error
    assert out.summary == f"oracle: 1 of 1 comparisons fail (worst: cl TE NaN at l=2 where the reference is {fmt(te)})"
    assert out.pushback[0] == (f"cl / TE: NaN at l=2 where the reference is {fmt(te)} (200 non-finite values in the "
                               "candidate where the reference is finite); 200 of 200 points fail vs rtol 0.001, atol 0")
    assert out.pushback[1] == (f"cl / TT: rel err 0.032 vs rtol 0.001 at l=2: |cand - ref| = {fmt(0.032 * tt)}, "
                               f"|ref| = {fmt(tt)}, atol 0 (32x the tolerance); 1 of 200 points fail")
    assert strict_load(tmp_path / "o" / "oracle.json")["metrics"]["cl"] == "inf"


def test_command_runs_in_the_workspace_and_its_output_is_kept(tmp_path):
    ws = setup(tmp_path / "ws", None)
    cmd = "mkdir -p out && cp data/cl.dat out/cl.dat && echo made && echo warn >&2"
    out = run_oracle(oracle(entry(), command=cmd), ws, tmp_path / "o", None)
    assert out.passed, out.summary
    assert (tmp_path / "o" / "command.stdout").read_text() == "made\n"
    assert (tmp_path / "o" / "command.stderr").read_text() == "warn\n"


def test_the_command_gets_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-secret")
    monkeypatch.setenv("MY_TOKEN", "tok-secret")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    ws = setup(tmp_path / "ws", None)
    cmd = "mkdir -p out && cp data/cl.dat out/cl.dat && env"
    assert run_oracle(oracle(entry(), command=cmd), ws, tmp_path / "o", None).passed
    env = (tmp_path / "o" / "command.stdout").read_text()
    assert "OMP_NUM_THREADS=3" in env and "sk-test-secret" not in env and "tok-secret" not in env


def test_stale_candidates_are_removed_before_the_command(tmp_path):
    ws = setup(tmp_path / "ws")  # a hand-written out/cl.dat that would pass
    out = run_oracle(oracle(entry(), command="true"), ws, tmp_path / "o", None)
    assert not out.passed and "no such file" in out.pushback[0]
    assert (ws / "reference" / "cl.dat").exists()


def test_failing_and_timed_out_commands_fail_the_verdict_and_the_supervisor_goes_on(tmp_path):
    ws = setup(tmp_path / "ws")
    out = run_oracle(oracle(entry(), command="echo boom >&2; exit 3", clean_candidates=False), ws,
                     tmp_path / "o", None)
    assert not out.passed and "oracle command exited with status 3: boom" in out.summary
    assert out.pushback[0] == "oracle command exited with status 3: boom"
    out = run_oracle(oracle(entry(), command="sleep 30", timeout=0.5, clean_candidates=False), ws,
                     tmp_path / "o2", None)
    assert not out.passed and "timed out after 0.5 s" in out.summary


def test_bad_inputs_become_failing_entries(tmp_path):
    ws = setup(tmp_path / "ws")
    (ws / "out" / "broken.dat").write_text("# l TT\n2 1\n3 x\n")
    entries = [entry(name="missing", candidate="out/none.dat"),
               entry(name="column", columns=["BB"]),
               entry(name="cell", candidate="out/broken.dat", columns=["TT"]),
               entry(name="noref", reference="reference/none.dat"),
               entry(name="garbage", candidate="out/garbage.dat")]
    (ws / "out" / "garbage.dat").write_bytes(np.random.default_rng(0).bytes(5000))
    out = run_oracle(oracle(*entries), ws, tmp_path / "o", None)
    assert not out.passed and set(out.metrics.values()) == {np.inf}
    text = "\n".join(out.pushback)
    assert "missing: " in text and "out/none.dat: no such file" in text
    assert "no column named 'BB'; it has: 0:l, 1:TT, 2:EE, 3:TE" in text
    assert "broken.dat line 3, column 2: 'x' is not a number" in text
    assert "reference/none.dat: no such file" in text
    assert out.summary.startswith("oracle: 5 of 5 comparisons fail")
    assert "garbage.dat: binary data, not a text table" in text


def test_tampered_and_deleted_references_are_restored_and_fail(tmp_path):
    ws = setup(tmp_path / "ws")
    store = tmp_path / "run" / "references"
    manifest = protect_references(oracle(entry()), ws, store)
    digest = manifest["references"]["reference/cl.dat"]["sha256"]
    assert oct(store.stat().st_mode & 0o777) == "0o700"
    assert run_oracle(oracle(entry()), ws, tmp_path / "o1", store).passed
    # the agent "fixes" the reference to match its output
    write_table(ws / "reference" / "cl.dat", perturb(REF, 0.1), HEADER)
    out = run_oracle(oracle(entry()), ws, tmp_path / "o2", store)
    assert not out.passed
    assert out.tampered == ["reference reference/cl.dat was changed in the workspace; nightshift restored it "
                            "from the run's private copy (references are read-only: fix the candidate, not the "
                            "reference)"]
    assert sha256_of(ws / "reference" / "cl.dat") == digest
    (ws / "reference" / "cl.dat").unlink()
    out = run_oracle(oracle(entry()), ws, tmp_path / "o3", store)
    assert not out.passed and "was deleted in the workspace" in out.tampered[0]
    assert sha256_of(ws / "reference" / "cl.dat") == digest
    assert run_oracle(oracle(entry()), ws, tmp_path / "o4", store).passed  # back to normal
    # a second protect (a resumed run) keeps the first copies
    write_table(ws / "reference" / "cl.dat", perturb(REF, 0.1), HEADER)
    assert protect_references(oracle(entry()), ws, store)["references"]["reference/cl.dat"]["sha256"] == digest


def test_heldout_values_never_reach_the_workspace_or_the_pushback(tmp_path):
    ws = setup(tmp_path / "ws")
    outside = tmp_path / "private" / "heldout.dat"
    secret = np.column_stack([np.arange(7, 57, dtype=float) + 0.123456789,
                              np.linspace(1.0, 2.0, 50) * 3.14159265358979])
    write_table(outside, secret, "# 1:kk 2:secretcol")
    # the agent's own output, on its own grid: y = 1.01 * the secret line
    xc = np.linspace(0, 60, 241)
    cand = np.column_stack([xc, 1.01 * (1.0 + (xc - secret[0, 0]) / 49) * 3.14159265358979])
    write_table(ws / "out" / "h.dat", cand, "# 1:kk 2:secretcol", fmt="%.5f")
    held = {"name": "hidden", "candidate": "out/h.dat", "reference": str(outside), "x": "kk", "rtol": 1e-3,
            "heldout": True, "interpolate": "linear"}
    cfg = oracle(entry(), held)
    run_root = ws / ".nightshift" / "runs" / "r1"
    store = run_root / "references"
    protect_references(cfg, ws, store)
    out_dir = run_root / "shifts" / "1" / "t1.oracle"
    out = run_oracle(cfg, ws, out_dir, store, exam=Exam(claimed=True, private=private_folder(run_root)))
    assert not out.passed and "hidden" not in out.metrics and out.heldout["evaluations"] == 1
    (ws / "out" / "h.dat").unlink()  # the agent's own output; everything else it can read is searched
    said = "\n".join([out.summary, *out.pushback, json.dumps(out.report)]) + all_text_under(ws)
    for value in secret.ravel():
        for text in (f"{value:.6g}", f"{value:.2e}", f"{value:.3e}", repr(float(value))):
            assert text not in said, text
    assert str(outside) not in said and "heldout.dat" not in said
    assert "held-out hidden: fails, within 100x its tolerance" in out.pushback
    assert "10.0" not in said and "secretcol" not in said.replace('"secretcol"', "")  # no error, no column
    # the private copy and the unredacted report live outside the workspace, readable only by the user
    hdir = heldout_store(store)
    assert not hdir.resolve().is_relative_to(ws.resolve())
    assert oct(hdir.stat().st_mode & 0o777) == "0o700"
    private = json.loads((hdir / "reports" / "1-t1.oracle.json").read_text())
    assert private["comparisons"][0]["columns"][0]["points"] == 50
    assert float(private["comparisons"][0]["ratio"]) == pytest_approx(10.0)  # the user's full figure
    # changing the original after the run started changes nothing: the private copy is compared
    write_table(ws / "out" / "h.dat", cand, "# 1:kk 2:secretcol", fmt="%.5f")
    write_table(outside, cand, "# 1:kk 2:secretcol")
    assert not run_oracle(cfg, ws, out_dir, store).passed


def test_heldout_errors_about_the_reference_are_redacted(tmp_path):
    ws = setup(tmp_path / "ws")
    outside = tmp_path / "private" / "h.dat"
    write_table(outside, REF[:150], HEADER)
    held = {"name": "h", "candidate": "out/cl.dat", "reference": str(outside), "x": "l", "heldout": True}
    out = run_oracle(oracle(held), ws, tmp_path / "o", None, exam=Exam(claimed=True))
    assert out.pushback == ["held-out h: fails, by more than 100x its tolerance (or cannot be compared)"]
    assert "150" not in json.dumps(out.report["comparisons"]) + out.summary  # the held-out grid size
    told = run_oracle(oracle(held), ws, tmp_path / "o", None)  # the user's own compare: the whole message
    assert "150" in told.pushback[0]


def test_a_missing_heldout_reference_fails_without_saying_where(tmp_path):
    ws = setup(tmp_path / "ws")
    held = {"name": "h", "candidate": "out/cl.dat", "reference": str(tmp_path / "gone" / "h.dat"), "x": "l",
            "heldout": True}
    store = ws / ".nightshift" / "runs" / "r" / "references"
    protect_references(oracle(held), ws, store)
    out = run_oracle(oracle(held), ws, tmp_path / "o", store, exam=Exam(claimed=True))
    assert not out.passed and out.pushback == [f"held-out h: {UNAVAILABLE}"]
    assert "gone" not in json.dumps(out.report) + out.summary
    assert "gone/h.dat" in out.heldout["unavailable"]["h"]  # for the pause the user reads


def test_a_heldout_reference_that_vanished_from_the_store_is_named_with_its_fix(tmp_path):
    ws = setup(tmp_path / "ws")
    outside = tmp_path / "held" / "h.dat"
    write_table(outside, REF, HEADER)
    held = {"name": "h", "candidate": "out/cl.dat", "reference": str(outside), "x": "l", "heldout": True}
    store = ws / ".nightshift" / "runs" / "r" / "references"
    protect_references(oracle(held), ws, store)
    for copy in (heldout_store(store)).glob("*-h.dat"):
        copy.unlink()
    healed = run_oracle(oracle(held), ws, tmp_path / "o", store, exam=Exam(claimed=True))
    assert healed.heldout["evaluations"] == 1  # the intact original made the copy again
    for copy in (heldout_store(store)).glob("*-h.dat"):
        copy.unlink()
    outside.unlink()
    out = run_oracle(oracle(held), ws, tmp_path / "o", store, exam=Exam(claimed=False))
    (why,) = out.heldout["unavailable"].values()
    assert "\n" not in why and f"put the original file back at {outside}" in why


def test_fast_oracle_runs_the_fast_subset_and_command(tmp_path):
    ws = setup(tmp_path / "ws")
    cfg = oracle(entry(name="slow", candidate="out/slow.dat"), entry(name="quick", fast=True),
                 command="exit 1", fast_command="touch fast-ran", clean_candidates=False)
    out = run_oracle(cfg, ws, tmp_path / "o", None, full=False)
    assert out.passed and list(out.metrics) == ["quick"] and (ws / "fast-ran").exists()
    assert out.report["mode"] == "fast"
    full = run_oracle(cfg, ws, tmp_path / "o2", None, full=True)
    assert not full.passed and set(full.metrics) == {"slow", "quick"}


def pytest_approx(value):
    import pytest
    return pytest.approx(value, rel=1e-3)


def test_a_failing_oracle_check_opens_with_what_fails_it_not_with_all_pass(tmp_path):
    from nightshift.supervisor.verify.oracle.report import summary_line
    ws = setup(tmp_path / "ws")
    shown = run_oracle(oracle(entry(rtol=1e-9)), ws, tmp_path / "o", None).report["comparisons"]
    line = summary_line(shown, ["out/cl.dat is a symlink out of the workspace: not read"])
    assert line.startswith("oracle: 1 finding fails it: out/cl.dat is a symlink out of the workspace")
    assert line.endswith("(the comparisons alone: all 1 within tolerance)")
    assert summary_line(shown, []).startswith("oracle: all 1 comparisons pass")
