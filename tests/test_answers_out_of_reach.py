"""The candidates must come from the solver, never from the references: the oracle command runs where no
reference can be read (bubblewrap, or the references moved aside where it cannot run), a candidate equal to its
reference passes bit for bit only when it was computed there, and reference values pasted into the code are named
with file and line.
Each cheat is a real command against real files; the legitimate solver and the tests that read the references
keep passing."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from nightshift.supervisor.verify.oracle import protect_references, run_oracle
from nightshift.supervisor.sandbox.boundary import boundary_for_oracle
from nightshift.supervisor.sandbox.probe import bwrap_problem
from nightshift.supervisor.verify.oracle.seal import MARKER, put_back
from tests.fixtures_core import wait_for
from tests.fixtures_oracle import oracle, spectrum, write_table

HEADER = "# 1:l 2:TT 3:EE 4:TE"
REF = spectrum(60)
SOLVED = REF.copy()
SOLVED[:, 1:] *= 1 + 1e-12


def entry(**kw):
    return {"name": "cl", "candidate": "out/cl.dat", "reference": "reference/cl.dat", "x": "l", "rtol": 1e-6, **kw}


def workspace(tmp_path, heldout: bool = False):
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)  # the solver's input in a legitimate workspace
    (ws / "reference" / "notes.txt").write_text("how the reference was made\n")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    entries = [entry()]
    if heldout:
        held = tmp_path / "held" / f"cl2-{uuid.uuid4().hex}.dat"  # no other file on the disk has its name
        write_table(held, REF, HEADER)
        entries.append(entry(name="held", candidate="out/cl2.dat", reference=str(held), heldout=True))
    return ws, entries


def need_bwrap():
    problem = bwrap_problem()
    if problem and os.environ.get("CI") == "true":
        pytest.fail(f"bubblewrap is required in CI (make test installs it): {problem}")
    if problem:
        pytest.skip(f"bubblewrap cannot run here: {problem}")


def test_a_legitimate_solver_passes_and_sees_its_inputs(tmp_path):
    need_bwrap()
    ws, entries = workspace(tmp_path)
    cmd = "mkdir -p out && cat reference/notes.txt > out/seen.txt && cp data/cl.dat out/cl.dat"
    out = run_oracle(oracle(*entries, command=cmd), ws, tmp_path / "o", None)
    assert out.passed, out.summary
    assert (ws / "out" / "seen.txt").read_text() == "how the reference was made\n"  # a sibling stays readable
    assert out.report["sealed"] == "namespace" and out.report["heldout_protected"] and out.report["seal"] == []


def test_a_solver_that_copies_the_reference_finds_nothing_to_copy(tmp_path):
    need_bwrap()
    ws, entries = workspace(tmp_path)
    out = run_oracle(oracle(*entries, command="mkdir -p out && cp reference/cl.dat out/cl.dat"), ws, tmp_path / "o",
                     None)
    assert not out.passed
    hint = next(line for line in out.pushback if "tried to read reference/cl.dat" in line)
    assert "references are hidden while it runs" in hint and "data/" in hint
    assert (ws / "reference" / "cl.dat").exists()  # hidden from the command only


def test_an_exact_match_not_computed_out_of_reach_is_still_refused_and_says_why(tmp_path):
    ws, entries = workspace(tmp_path)
    write_table(ws / "out" / "cl.dat", REF, HEADER)  # an earlier copy, kept (no clean-up, no command)
    out = run_oracle(oracle(*entries, clean_candidates=False), ws, tmp_path / "o", None)
    assert not out.passed
    line = next(line for line in out.pushback if line.startswith("out/cl.dat may be a copy of reference/cl.dat"))
    assert "no oracle command ran" in line and "bit for bit" not in out.summary
    need_bwrap()  # a command in the namespace that leaves the stale copy in place: still not computed there
    stale = run_oracle(oracle(*entries, command="true", clean_candidates=False), ws, tmp_path / "o2", None)
    assert not stale.passed and any("clean_candidates = false" in line for line in stale.pushback), stale.pushback


def test_an_exact_match_computed_with_the_references_out_of_reach_passes_bit_for_bit(tmp_path):
    """The solver computes the reference's very bits (here: halves its input, twice the answers, exactly): a pass,
    said as such, with the missing held-out exam named as a note."""
    need_bwrap()
    ws, entries = workspace(tmp_path)
    doubled = REF.copy()
    doubled[:, 1:] *= 2
    write_table(ws / "data" / "twice.dat", doubled, HEADER)
    solve = (f"{sys.executable} -c \"import numpy as np; t = np.loadtxt('data/twice.dat'); t[:, 1:] /= 2; "
             f"np.savetxt('out/cl.dat', t, fmt='%.17g', header='1:l 2:TT 3:EE 4:TE')\"")
    out = run_oracle(oracle(*entries, command=f"mkdir -p out && {solve}"), ws, tmp_path / "o", None)
    assert out.passed, out.pushback
    assert out.summary.endswith("(cl matched bit for bit)"), out.summary
    assert out.report["comparisons"][0]["exact"] is True
    assert "note: cl: matched reference/cl.dat bit for bit (every compared value equal), computed by the oracle " \
           "command with the references out of reach" in out.pushback
    assert any(line.startswith("note: only a held-out reference proves the answers were computed")
               for line in out.pushback), out.pushback


def test_without_the_namespace_an_exact_match_is_still_refused_saying_why(tmp_path):
    """Where no namespace is made (the references moved aside, readable in the run's store to a process of the same
    user), exact agreement may still be copying: the old refusal, with the reason and the fix."""
    ws, entries = workspace(tmp_path)
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    doubled = REF.copy()
    doubled[:, 1:] *= 2
    write_table(ws / "data" / "twice.dat", doubled, HEADER)
    solve = (f"mkdir -p out && {sys.executable} -c \"import numpy as np; t = np.loadtxt('data/twice.dat'); "
             "t[:, 1:] /= 2; np.savetxt('out/cl.dat', t, fmt='%.17g', header='1:l 2:TT 3:EE 4:TE')\"")
    cfg = oracle(*entries, command=solve)
    out = run_oracle(cfg, ws, tmp_path / "o", store, boundary=boundary_for_oracle(ws, cfg, mode="off"))
    assert not out.passed and "matched bit for bit" not in out.summary
    line = next(line for line in out.pushback if line.startswith("out/cl.dat may be a copy of reference/cl.dat"))
    assert "ran without nightshift's namespace (the references were moved out of the workspace" in line
    assert "nightshift doctor" in line


def test_reference_values_pasted_into_the_code_are_named_with_file_and_line(tmp_path):
    ws, entries = workspace(tmp_path)
    values = ", ".join(repr(float(v)) for v in REF[5:30, 1])
    (ws / "solver.py").write_text(f"import numpy\n\nTT = [\n    {values}\n]\n")
    write_table(ws / "out" / "cl.dat", SOLVED, HEADER)
    out = run_oracle(oracle(*entries, clean_candidates=False), ws, tmp_path / "o", None)
    assert not out.passed
    finding = next(line for line in out.pushback if line.startswith("solver.py:4 holds 25 of a reference's values"))
    assert "pasted" in finding
    short = ", ".join(repr(float(v)) for v in REF[5:15, 1])  # 10 in a row: below the run that counts
    (ws / "solver.py").write_text(f"TT = [{short}]\n")
    assert run_oracle(oracle(*entries, clean_candidates=False), ws, tmp_path / "o2", None).passed


def test_held_out_references_are_absent_for_the_command_even_when_searched_for(tmp_path):
    need_bwrap()
    ws, entries = workspace(tmp_path, heldout=True)
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    held = entries[1]["reference"]
    name = held.rsplit("/", 1)[1]
    cmd = ("mkdir -p out && cp data/cl.dat out/cl.dat && "
           f"(find / -name {name} -not -path '/proc/*' 2>/dev/null | head -1 | xargs -r -I{{}} cp {{}} out/cl2.dat; "
           f"cp {held} out/cl2.dat; true)")
    out = run_oracle(oracle(*entries, command=cmd), ws, tmp_path / "o", store)
    assert not (ws / "out" / "cl2.dat").exists()  # neither the configured path nor the private copy was there
    assert not out.passed and out.metrics["held"] == float("inf")


def test_without_a_sandbox_the_references_are_moved_aside_and_always_put_back(tmp_path):
    ws, entries = workspace(tmp_path, heldout=True)
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    cmd = "mkdir -p out && (ls reference > out/listing.txt) && cp data/cl.dat out/cl.dat"
    cfg = oracle(*entries, command=cmd)
    out = run_oracle(cfg, ws, tmp_path / "o", store, boundary=boundary_for_oracle(ws, cfg, mode="off"))
    assert out.report["sealed"] == "moved" and not out.report["heldout_protected"]
    assert (ws / "out" / "listing.txt").read_text() == "notes.txt\n"  # cl.dat was away while it ran
    assert (ws / "reference" / "cl.dat").exists() and not (store / MARKER).exists()
    notes = " ".join(out.report["seal"])
    assert "moved out of the workspace" in notes and "held-out references were NOT hidden" in notes
    assert any(line.startswith("note: held-out references were NOT hidden") for line in out.pushback)
    assert out.summary.endswith("[held-out references not protected from the solver on this machine]")


def test_a_crash_during_the_oracle_command_is_undone_at_the_next_start(tmp_path):
    ws, entries = workspace(tmp_path)
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    code = ("import sys; from pathlib import Path; from nightshift.supervisor.verify.oracle import run_oracle; "
            "from tests.fixtures_oracle import oracle; from nightshift.supervisor.sandbox.boundary import boundary_for_oracle; "
            f"cfg = oracle(*{entries!r}, command='sleep 60'); "
            f"run_oracle(cfg, Path({str(ws)!r}), Path({str(tmp_path / 'o')!r}), "
            f"Path({str(store)!r}), boundary=boundary_for_oracle(Path({str(ws)!r}), cfg, mode='off'))")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=os.path.dirname(os.path.dirname(__file__)))
    try:
        wait_for(lambda: (store / MARKER).exists() and not (ws / "reference" / "cl.dat").exists(), timeout=60,
                 what="the references moved aside")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (ws / "reference" / "cl.dat").exists()  # the kill -9 left them away
    put_back(ws, store)  # what the supervisor does first when it starts
    assert (ws / "reference" / "cl.dat").exists() and not (store / MARKER).exists()


def test_a_reference_in_the_folder_the_solver_writes_to_reads_empty_and_outputs_stay(tmp_path):
    """Bad input: reference and candidates share out/. The solver's outputs must survive the seal; the reference
    reads as an empty file while the command runs, and the verdict says to give references their own folder."""
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "out" / "ref.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)
    cfg = oracle(entry(reference="out/ref.dat"), command="cp data/cl.dat out/cl.dat && wc -c < out/ref.dat > out/n",
                 clean_candidates=False)
    out = run_oracle(cfg, ws, tmp_path / "o", None)
    assert out.passed, out.summary
    assert (ws / "out" / "n").read_text().strip() == "0" and (ws / "out" / "ref.dat").stat().st_size > 0
    assert any("out holds references and candidates" in n for n in out.report["seal"])


def test_a_reference_at_the_top_of_the_workspace_keeps_the_folders_the_solver_creates(tmp_path):
    """A reference beside nightshift.toml: masking the whole workspace folder would swallow out/, which the solver
    creates while it runs. The reference reads empty instead, and the outputs stay on disk."""
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "ref.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)
    cfg = oracle(entry(reference="ref.dat"), command="mkdir -p out && cp data/cl.dat out/cl.dat && wc -c < ref.dat > n")
    out = run_oracle(cfg, ws, tmp_path / "o", None)
    assert out.passed, out.summary
    assert (ws / "out" / "cl.dat").exists() and (ws / "n").read_text().strip() == "0"
    assert (ws / "ref.dat").stat().st_size > 0


def test_a_path_bubblewrap_cannot_mask_falls_back_to_moving_the_references_aside(tmp_path):
    """A dangling symlink beside a reference (a stale link is common in data folders) is an entry bubblewrap
    cannot bind back over the masked folder, so it refuses to start: the command runs again with the references
    moved aside, the verdict says why in bwrap's own words, and everything is put back."""
    need_bwrap()
    ws, entries = workspace(tmp_path)
    (ws / "reference" / "old.dat").symlink_to(tmp_path / "gone.dat")
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    cmd = "mkdir -p out && (ls reference > out/listing.txt) && cp data/cl.dat out/cl.dat"
    out = run_oracle(oracle(*entries, command=cmd), ws, tmp_path / "o", store)
    assert "cl.dat" not in (ws / "out" / "listing.txt").read_text()  # away while the second attempt ran
    assert out.passed, out.summary
    notes = " ".join(out.report["seal"])
    assert "moved out of the workspace" in notes and "bwrap:" in notes
    assert (ws / "reference" / "cl.dat").exists() and (ws / "reference" / "old.dat").is_symlink()
    assert not (store / MARKER).exists()


def test_what_the_agent_is_told_about_the_seal_follows_its_state_not_its_wording(tmp_path):
    """A note that quotes a path is not a warning because the path reads like one: bubblewrap refuses a dangling
    link named "NOT hidden.dat", the fallback's note quotes it, and with no held-out data nothing is open to warn of.
    With a held-out comparison the same fallback is a warning the agent reads."""
    need_bwrap()
    ws, entries = workspace(tmp_path)
    (ws / "reference" / "NOT hidden.dat").symlink_to(tmp_path / "gone.dat")
    out = run_oracle(oracle(*entries, command="mkdir -p out && cp data/cl.dat out/cl.dat"), ws, tmp_path / "o", None)
    assert out.passed and out.report["heldout_protected"], out.summary
    assert "NOT hidden.dat" in " ".join(out.report["seal"])  # the user's report keeps the whole story
    assert not [line for line in out.pushback if line.startswith("note:")], out.pushback
    ws2, entries2 = workspace(tmp_path / "held", heldout=True)
    (ws2 / "reference" / "old.dat").symlink_to(tmp_path / "gone.dat")
    out = run_oracle(oracle(*entries2, command="mkdir -p out && cp data/cl.dat out/cl.dat"), ws2, tmp_path / "o2", None)
    assert not out.report["heldout_protected"]
    assert [line[:45] for line in out.pushback if line.startswith("note:")] == \
        ["note: held-out references were NOT hidden fro"]
