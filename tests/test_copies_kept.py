"""Issue 35: what is evidence of copying once exact agreement is not. A reference's content kept within the solver's
reach is a finding, wherever it is kept and however it is dressed: a byte copy anywhere in the workspace, a dataset
of another container holding a reference field's values, a reference table printed again, a held-out reference
(named only as such). What an honest workspace holds (inputs of the same shape, a zero field's copy, a link to a
reference, a FIFO) is not, and the scan neither follows a link nor blocks on a FIFO."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import h5py
import numpy as np

from nightshift.supervisor.verify.oracle import protect_references, run_oracle
from nightshift.supervisor.verify.oracle.stash import walk
from tests.fixtures_oracle import oracle, spectrum, write_table
from tests.test_answers_out_of_reach import HEADER, REF, SOLVED, entry, need_bwrap

FIELD = np.sin(np.linspace(0, 7, 48 * 32)).reshape(48, 32) + 2.0  # a field of many distinct values


def field_ws(tmp_path):
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    with h5py.File(ws / "reference" / "final.h5", "w") as f:
        f["data"] = FIELD
        f["zero"] = np.zeros((48, 32))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    comps = [{"name": "final", "candidate": "out/final.h5:/data", "reference": "reference/final.h5:/data",
              "rtol": 1e-9},
             {"name": "zero", "candidate": "out/final.h5:/zero", "reference": "reference/final.h5:/zero",
              "rtol": 1e-9, "atol": 1e-12}]
    return ws, comps


# The solver computes the field the way the reference was made: the same bits.
SOLVE = (f"mkdir -p out && {sys.executable} -c \"import numpy as np, h5py; f = h5py.File('out/final.h5', 'w'); "
         "f['data'] = np.sin(np.linspace(0, 7, 48 * 32)).reshape(48, 32) + 2.0; f['zero'] = np.zeros((48, 32))\"")


def test_a_field_computed_bit_for_bit_passes_and_its_copy_in_another_container_is_found(tmp_path):
    need_bwrap()
    ws, comps = field_ws(tmp_path)
    honest = run_oracle(oracle(*comps, command=SOLVE), ws, tmp_path / "o", None)
    assert honest.passed, honest.pushback
    assert "matched bit for bit" in honest.summary and not honest.report["problems"]
    with h5py.File(ws / "warm.h5", "w") as f:  # the field kept under another name, as float64
        f["init/state"] = FIELD
        f["blank"] = np.zeros((48, 32))  # a copied zero field is no evidence
    np.savez(ws / "cache.npz", u=FIELD.astype(np.float64))
    out = run_oracle(oracle(*comps, command=SOLVE), ws, tmp_path / "o2", None)
    assert not out.passed and "matched bit for bit" not in out.summary
    found = [p for p in out.report["problems"] if "holds the values of" in p]
    assert sorted(p.split(" holds")[0] for p in found) == ["cache.npz:u", "warm.h5:/init/state"], found
    assert all("reference/final.h5:/data" in p and "delete it" in p for p in found)


def test_a_reference_table_printed_again_is_a_copy_and_an_input_of_its_shape_is_not(tmp_path):
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)  # the solver's input: close, not equal
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    cmd = "mkdir -p out && cp data/cl.dat out/cl.dat"
    assert run_oracle(oracle(entry(), command=cmd), ws, tmp_path / "o", None).passed
    write_table(ws / "notes" / "warm.txt", REF, "# l TT EE TE", fmt="%.20e", delimiter="\t")  # other spacing, digits
    out = run_oracle(oracle(entry(), command=cmd), ws, tmp_path / "o2", None)
    assert not out.passed
    assert any(p.startswith("notes/warm.txt holds the values of reference/cl.dat") for p in out.report["problems"])


def test_a_byte_copy_of_a_held_out_reference_is_found_without_naming_it(tmp_path):
    """The agent cannot read a held-out reference; a copy in the workspace (one the user left, say) is still the
    answer within the solver's reach. The finding says "a held-out reference", never its path (the user's own
    compare shows it; inside a run it counts at a claim of done, told as a held-out finding)."""
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    held_ref = spectrum(60, seed=3)
    held = tmp_path / "held" / f"cl2-{uuid.uuid4().hex}.dat"
    write_table(held, held_ref, HEADER)
    write_table(ws / "old" / "answers.dat", held_ref, HEADER)  # the same bytes
    entries = [entry(), entry(name="held", candidate="out/cl2.dat", reference=str(held), heldout=True)]
    store = tmp_path / "run" / "references"
    protect_references(oracle(*entries), ws, store)
    out = run_oracle(oracle(*entries, command="mkdir -p out && cp data/cl.dat out/cl.dat"), ws, tmp_path / "o", store)
    assert not out.passed
    found = [p for p in out.report["problems"] + out.pushback if "old/answers.dat" in p]
    every = " ".join(out.report["problems"] + out.pushback + [out.summary])
    assert held.name not in every and str(held.parent) not in every
    assert found and all(p.startswith("old/answers.dat holds the same bytes as a held-out reference")
                         for p in found), every


def test_a_copy_hidden_inside_dot_git_is_found(tmp_path):
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / ".git" / "warm.dat").write_bytes((ws / "reference" / "cl.dat").read_bytes())
    out = run_oracle(oracle(entry(), command="mkdir -p out && cp .git/warm.dat out/cl.dat"), ws, tmp_path / "o", None)
    assert not out.passed and "matched bit for bit" not in out.summary
    assert any(p.startswith(".git/warm.dat holds the same bytes as reference/cl.dat") for p in out.report["problems"])


def test_a_copy_committed_then_taken_back_or_stashed_is_found_in_git(tmp_path):
    """Beside the committed-then-deleted copy (tests/test_bit_for_bit.py): a commit reset away (still in the reflog)
    and a stash are git's store too, where the solver's `git cat-file` reads them."""
    from nightshift.supervisor.verify.oracle.copies import reference_files
    from nightshift.supervisor.verify.oracle.kept import kept_copies
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@a"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(git + ["add", "-A"], cwd=ws, check=True)
    subprocess.run(git + ["commit", "-qm", "base"], cwd=ws, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()
    cfg = oracle(entry())
    refs = reference_files(cfg, ws, None)
    assert kept_copies(cfg, ws, refs, base).findings == []  # the reference in its own place is itself
    (ws / "a.dat").write_bytes((ws / "reference" / "cl.dat").read_bytes())
    subprocess.run(git + ["add", "a.dat"], cwd=ws, check=True)
    subprocess.run(git + ["commit", "-qm", "keep"], cwd=ws, check=True)
    subprocess.run(git + ["reset", "-q", "--soft", "HEAD~1"], cwd=ws, check=True)
    subprocess.run(git + ["rm", "-q", "--cached", "a.dat"], cwd=ws, check=True)
    (ws / "a.dat").unlink()
    found = kept_copies(cfg, ws, refs, base).findings
    assert [f.split(" was committed")[0] for f in found] == ["a.dat"], found
    (ws / "b.dat").write_bytes((ws / "reference" / "cl.dat").read_bytes())
    subprocess.run(git + ["add", "b.dat"], cwd=ws, check=True)
    subprocess.run(git + ["stash", "-q"], cwd=ws, check=True)
    found = kept_copies(cfg, ws, refs, base).findings
    assert sorted(f.split(" was committed")[0] for f in found) == ["a.dat", "b.dat"], found


def test_a_stash_the_solver_reads_and_deletes_is_still_found(tmp_path):
    """The scan looks before the command runs: what the solver could copy from was there then."""
    need_bwrap()
    ws, comps = field_ws(tmp_path)
    (ws / "cache").mkdir()
    (ws / "cache" / "init.h5").write_bytes((ws / "reference" / "final.h5").read_bytes())
    cmd = "mkdir -p out && cp cache/init.h5 out/final.h5 && rm cache/init.h5"
    out = run_oracle(oracle(*comps, command=cmd), ws, tmp_path / "o", None)
    assert not (ws / "cache" / "init.h5").exists() and not out.passed
    assert any(p.startswith("cache/init.h5 holds the same bytes as reference/final.h5")
               for p in out.report["problems"]), out.report["problems"]


def test_a_checkpoint_the_sealed_solver_wrote_is_its_output_and_a_copy_put_there_later_is_not(tmp_path):
    """A solver that also writes a restart file equal to its final output (bit for bit the reference): computed
    in the namespace, so no finding at the next verdict; the agent copying the reference over it afterwards is."""
    need_bwrap()
    ws, comps = field_ws(tmp_path)
    checkpoint = SOLVE.replace("out/final.h5", "out/restart.h5") + " && " + SOLVE.replace("mkdir -p out && ", "")
    store = tmp_path / "run" / "references"
    protect_references(oracle(*comps), ws, store)
    for n in range(2):
        out = run_oracle(oracle(*comps, command=checkpoint), ws, tmp_path / f"o{n}", store)
        assert out.passed and "matched bit for bit" in out.summary, out.report["problems"]
    assert (ws / "out" / "restart.h5").exists()
    with h5py.File(ws / "out" / "restart.h5", "r+") as f:  # the agent's turn: the reference's field put in it
        f["data"][...] = FIELD * 1.0  # the same values written again: the file's inode changed after the command
    out = run_oracle(oracle(*comps, command="true"), ws, tmp_path / "o3", store)
    assert any(p.startswith("out/restart.h5 holds the same bytes as reference/final.h5")
               for p in out.report["problems"]), out.report["problems"]


def test_a_link_to_a_reference_and_a_fifo_are_not_read(tmp_path):
    need_bwrap()
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "cl.dat", REF, HEADER)
    write_table(ws / "data" / "cl.dat", SOLVED, HEADER)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "data" / "ref-link.dat").symlink_to(ws / "reference" / "cl.dat")  # reads as empty in the namespace
    os.mkfifo(ws / "data" / "pipe.dat")  # would block a reader that opened it
    out = run_oracle(oracle(entry(), command="mkdir -p out && cp data/cl.dat out/cl.dat"), ws, tmp_path / "o", None)
    assert out.passed, out.pushback
    assert set(walk(ws).files) >= {"data/cl.dat", "reference/cl.dat"} and "data/pipe.dat" not in walk(ws).files


def test_the_walk_says_what_it_did_not_scan(tmp_path):
    ws = tmp_path / "ws"
    for n in range(12):
        (ws / f"d{n}").mkdir(parents=True)
        (ws / f"d{n}" / "f").write_text("x")
    found = walk(ws, limit=10)
    assert len(found.files) < 12 and found.unscanned == [
        "the copy scan stopped after 10 files and folders (a workspace that large: move data the solver does not "
        "need out of it)"]


def test_a_copy_is_named_once_whatever_its_file_name_says(tmp_path):
    """The copies found by their bytes are passed on by path, not recovered from the finding's words: a copy whose
    name reads like a finding is still one finding, not a second one from the dataset scan."""
    from nightshift.supervisor.config.oracle import OracleConfig
    from nightshift.supervisor.verify.oracle.copies import reference_files
    from nightshift.supervisor.verify.oracle.kept import kept_copies

    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    table = "".join(f"{i} {i * 0.123456789:.17g} {i ** 0.5:.17g}\n" for i in range(300))
    (ws / "reference" / "result.dat").write_text(table)
    odd = ws / "x holds the same bytes as y.dat"
    odd.write_text(table)
    cfg = OracleConfig.model_validate({"compare": [{"name": "result", "candidate": "out/result.dat",
                                                     "reference": "reference/result.dat"}]})
    found = kept_copies(cfg, ws, reference_files(cfg, ws, None), None)
    assert len(found.findings) == 1 and found.findings[0].startswith(
        "x holds the same bytes as y.dat holds the same bytes as reference/result.dat"), found.findings
