"""Issue 22: holding out is easy and expected. `nightshift init --holdout NAME|N` moves data sets into nightshift's
private store and writes their comparisons held out; check and status say when nothing is held out; bad input
(a name the folder lacks, a budget of 0) is one line and loses nothing; allow_exact, now a no-op, still loads (with
held out too) and check says to delete it."""
from __future__ import annotations

from pathlib import Path

import pytest

from nightshift.supervisor.config.schema import load_config
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_references import reference_ws  # noqa: F401
from tests.test_bad_input import one_line_error


@pytest.fixture
def ws(reference_ws):
    return reference_ws


def test_holdout_by_name_moves_the_data_set_out_of_the_workspace_and_writes_it_held_out(ws):
    before = (ws / "reference" / "bao.csv").read_bytes()
    out = nightshift("init", str(ws), "--reference-dir", "reference", "--holdout", "bao")
    assert out.returncode == 0, out.stderr
    assert not (ws / "reference" / "bao.csv").exists() and "held out reference/bao.csv" in out.stdout
    comps = {c.name: c for c in load_config(ws).oracle.compare}
    held = comps["bao"]
    assert held.heldout and held.candidate == "out/bao.csv"  # the solver still writes its candidate
    assert Path(held.reference).read_bytes() == before and not Path(held.reference).is_relative_to(ws)
    assert oct(Path(held.reference).parent.stat().st_mode & 0o777) == "0o700"
    assert [n for n, c in comps.items() if c.heldout] == ["bao"]
    check = nightshift("check", str(ws))
    assert "every comparison is visible" not in check.stdout
    assert "is inside the workspace" not in check.stdout  # moved out: no start problem


def test_holdout_n_keeps_every_kind_of_file_visible(ws):
    out = nightshift("init", str(ws), "--reference-dir", "reference", "--holdout", "1")
    assert out.returncode == 0, out.stderr
    held = [c.name for c in load_config(ws).oracle.compare if c.heldout]
    assert held == ["pk_camb"]  # the one kind with a file to spare (.dat); .csv, .npz and .h5 stay visible
    assert (ws / "reference" / "cl_class.dat").exists()


@pytest.mark.parametrize("spec, needle", [("nosuch", "--holdout nosuch: reference/ has no data set of that name"),
                                          ("2", "at most 1 can be held out with every kind still visible")])
def test_a_holdout_the_folder_cannot_give_is_one_line_and_moves_nothing(ws, spec, needle):
    listing = sorted(p.name for p in (ws / "reference").iterdir())
    one_line_error(nightshift("init", str(ws), "--reference-dir", "reference", "--holdout", spec, "-y"), needle)
    assert sorted(p.name for p in (ws / "reference").iterdir()) == listing
    assert not (ws / "nightshift.toml").exists()


def test_with_nothing_held_out_check_and_status_say_a_memorised_answer_passes(workspace):
    ws = workspace.path
    (ws / "reference").mkdir()
    (ws / "reference" / "r.dat").write_text("# 1:x 2:y\n1 2\n2 3\n")
    workspace.configure({"default": [["claim", "done", "x"]]}, backend="local", test_command="true",
                        extra='\n[oracle]\n[[oracle.compare]]\nname = "r"\ncandidate = "out/r.dat"\n'
                              'reference = "reference/r.dat"\n')
    said = "every comparison is visible: a solver that memorises the visible answers passes; hold out at least one"
    assert said in nightshift("check", str(ws)).stdout
    run = workspace.create_run()
    status = nightshift("status", run.run_id, cwd=ws).stdout
    assert said in [line for line in status.splitlines() if line.startswith("trust")][0]


@pytest.mark.parametrize("extra, needle", [
    ("heldout_budget = 0\n", "heldout_budget"),
])
def test_a_bad_heldout_setting_is_one_line_naming_it(workspace, extra, needle):
    ws = workspace.path
    workspace.configure({"default": []}, backend="local", test_command="true",
                        extra="\n[oracle]\n" + extra)
    before = (ws / "nightshift.toml").read_text()
    one_line_error(nightshift("run", str(ws)), needle, "nightshift.toml line")
    assert (ws / "nightshift.toml").read_text() == before
    assert not (ws / ".nightshift" / "runs").exists() or not any((ws / ".nightshift" / "runs").iterdir())


def test_allow_exact_still_loads_as_a_no_op_and_check_says_to_delete_it(workspace):
    ws = workspace.path
    (ws / "reference").mkdir()
    (ws / "reference" / "r.dat").write_text("# 1:x 2:y\n1 2\n2 3\n")
    workspace.configure({"default": []}, backend="local", test_command="true",
                        extra='\n[oracle]\n[[oracle.compare]]\nname = "r"\ncandidate = "out/r.dat"\n'
                              'reference = "reference/r.dat"\nallow_exact = true\n[[oracle.compare]]\nname = "h"\n'
                              'candidate = "out/h.dat"\nreference = "/elsewhere/h.dat"\nheldout = true\n'
                              'allow_exact = true\n')
    assert [c.allow_exact for c in load_config(ws).oracle.compare] == [True, True]
    notes = [line for line in nightshift("check", str(ws)).stdout.splitlines() if "deprecated" in line]
    assert notes == ["note  config       nightshift.toml: allow_exact (on 'h', 'r') is deprecated and does nothing: "
                     "an exact match computed with the references out of reach passes (reported as matched bit for "
                     "bit); delete the line"], notes
