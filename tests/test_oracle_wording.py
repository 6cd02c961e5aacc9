"""Issue 45's wording: a shape that differs along one axis says which, how many frames or points were written and
whether those match; a storage type too coarse for the tolerance is named; a bit-for-bit pass names no worst point;
init takes comparison names from the files, not from the goal's English; an oracle command's failure where it runs
is read in its own words (failure_words), a solver's own error is not."""
from __future__ import annotations

import json

import numpy as np

from tests.fixtures_core import nightshift
from tests.fixtures_fields import hydro_state, write_hdf5
from tests.test_check import ready  # noqa: F401 - pytest fixture
from tests.test_oracle_fields_bad_input import H5, failing_entry, workspace


def _cut(root, rows: int, change: float = 0.0):
    import h5py
    write_hdf5(root / "reference" / "t.h5", {"rho": hydro_state()["rho"]})
    with h5py.File(root / "out" / "t.h5", "w") as f:
        f["state/rho/data"] = hydro_state()["rho"][:rows] * (1 + change)


def test_a_run_cut_short_says_the_axis_the_count_and_that_what_was_written_matches(tmp_path):
    root = workspace(tmp_path, H5)
    _cut(root, 40)
    error = failing_entry(root)["error"]
    assert "along x: 40 of 48 points written; the 40 written match bit for bit" in error, error
    _cut(root, 40, change=1e-3)
    error = failing_entry(root)["error"]
    assert "the 40 written differ from the reference's first 40" in error, error


def test_float32_storage_against_a_tighter_tolerance_is_named(tmp_path):
    import h5py
    root = workspace(tmp_path, H5.replace("rtol = 1e-6", "rtol = 1e-10"))
    write_hdf5(root / "reference" / "t.h5", {"rho": hydro_state()["rho"]})
    with h5py.File(root / "out" / "t.h5", "w") as f:
        f["state/rho/data"] = hydro_state()["rho"].astype(np.float32)
    out = nightshift("compare", str(root), "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and "stores float32 values" in report["summary"] and "rtol 1e-10" in report["summary"]
    with h5py.File(root / "out" / "t.h5", "w") as f:  # float64, off by as much: the solver's error, not the storage
        f["state/rho/data"] = hydro_state()["rho"].astype(np.float32).astype(np.float64)
    report = json.loads(nightshift("compare", str(root), "--json").stdout)
    assert not report["passed"] and "stores" not in report["summary"], report["summary"]


def test_a_bit_for_bit_pass_names_no_worst_point():
    from nightshift.supervisor.verify.oracle.report import summary_line

    def entry(ratio: float) -> dict:
        col = {"column": "rho", "kind": "field", "ratio": ratio, "rel_worst": ratio * 1e-6, "rtol": 1e-6, "atol": 0.0,
               "where_worst": "index (3, 4)", "max_abs": ratio, "passed": True}
        return {"name": "tube", "passed": True, "ratio": ratio, "columns": [col]}

    exact = summary_line([entry(0.0)], [])
    assert exact == "oracle: all 1 comparisons pass, equal to their references at every point", exact
    close = summary_line([entry(0.0), entry(0.25)], [])
    assert "(worst: tube held |cand - ref| <= atol + rtol x |ref| (atol 0, rtol 1e-06) at every point; worst 0.25 of " \
           "its tolerance at index (3, 4)" in close, close  # the bound that held (#44), the worst point by its share
    from nightshift.supervisor.cli.oracle_verbs import render_table
    for ratio, shown in ((0.0, False), (0.25, True)):  # compare's table: the "at" column too
        found = entry(ratio)
        found["columns"][0].update(max_rel=ratio * 1e-6, where_max_rel="index (3, 4)", points=6, failing=0,
                                   median_rel=0.0, p95_rel=0.0)
        assert ("index (3, 4)" in render_table({"comparisons": [found], "summary": ""})) is shown


def test_init_takes_names_from_the_files_not_from_the_goals_english(tmp_path):
    from nightshift.supervisor.cli.init.references import describe, survey_references
    state = hydro_state()
    write_hdf5(tmp_path / "reference" / "output.h5", {"rho": state["rho"], "momx": state["momx"]})
    survey = survey_references(tmp_path, "reference", goal="the output fields agree to 1e-10 relative")
    assert survey.own == {} and survey.tolerance.rtol == 1e-10
    assert not [line for line in describe(survey) if "its own" in line]
    survey = survey_references(tmp_path, "reference", goal="rho to 1e-6 relative, the rest to 1e-10 relative")
    assert survey.own["rho"].rtol == 1e-6 and survey.tolerance.rtol == 1e-10


def test_a_failure_where_the_command_runs_is_read_in_its_own_words(tmp_path):
    from nightshift.supervisor.sandbox.failure_words import environment_failure
    from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET

    def said(text: str, network=False, sockets=()):
        (tmp_path / "err").write_text(text)
        return environment_failure({"stderr": str(tmp_path / "err"), "stdout": None}, network, sockets)

    srun = ("srun: error: slurm_set_port: attempting to set port without address family\n"
            "srun: error: Unable to allocate resources: Address family not supported by protocol\n")
    found = said(srun)
    assert found.line.endswith("Address family not supported by protocol") and "command_network = true" in found.fix
    munge = "srun: error: Munge encode failed: Invalid file type for socket \"/run/munge/munge.socket.2\"\n"
    assert "[policy] sockets" in said(munge, network=True).fix
    assert "munged" in said(munge, network=True, sockets=(MUNGE_SOCKET,)).fix
    assert "shared library" in said("./solver: error while loading shared libraries: libpnetcdf.so.4: cannot open "
                                    "shared object file: No such file or directory\n").what
    assert said("bash: line 1: srun: command not found\n").what == "srun is not on this node's PATH"
    # the solver's own failure is the agent's to fix: no cause is made up for it
    assert said("Traceback (most recent call last):\nZeroDivisionError: division by zero\n") is None
    assert said("out/result.txt: No such file or directory\n") is None


LOADER = ("echo './solver: error while loading shared libraries: libpnetcdf.so.4: cannot open shared object file: "
          "No such file or directory' >&2; exit 127")


def test_check_names_a_failure_where_the_command_runs_and_leaves_the_solvers_own_a_note(ready):  # noqa: F811
    from tests.test_check import check, edit_toml
    edit_toml(ready, "make_out.py 0.005", "make_out.py 0.005; " + LOADER)
    out = check(ready)
    line = next(l for l in out.stdout.splitlines() if l.startswith("FAIL  oracle"))
    assert "a shared library is missing on this node" in line and "libpnetcdf.so.4" in line, out.stdout
    assert "expected while" not in out.stdout
    edit_toml(ready, "; " + LOADER, "; exit 3")
    out = check(ready)
    assert any(l.startswith("note  oracle") and "expected while the solver is not written" in l
               for l in out.stdout.splitlines()), out.stdout


def _compare_with(tmp_path, command: str) -> str:
    root = workspace(tmp_path, H5)
    write_hdf5(root / "reference" / "t.h5", {"rho": hydro_state()["rho"]})
    toml = root / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[oracle]\n", f"[oracle]\ncommand = {json.dumps(command)}\n"))
    out = nightshift("compare", str(root), "--json")
    assert out.returncode == 1
    return json.loads(out.stdout)["summary"]


def test_the_verdict_says_why_a_candidate_was_not_written_in_the_commands_words(tmp_path):
    srun = "echo 'srun: error: Unable to allocate resources: Address family not supported by protocol' >&2; exit 1"
    summary = _compare_with(tmp_path / "a", srun)
    assert "out/t.h5: no such file: not written: the oracle command failed (status 1" in summary, summary
    assert "Address family not supported by protocol" in summary and "command_network = true" in summary
    # exit 0 all the same (a script without `set -e`): the words still come out of its output, not a stdout file
    summary = _compare_with(tmp_path / "b", LOADER.replace("exit 127", "true"))
    assert "not written; the oracle command exited 0, but a shared library is missing" in summary, summary
    # the solver's own error: its last words, no cause made up for it
    summary = _compare_with(tmp_path / "c", "python3 -c '1/0'")
    assert "ZeroDivisionError" in summary and "command_network" not in summary and "library" not in summary, summary


def test_an_oracle_command_naming_srun_gets_munges_socket_whatever_the_backend(tmp_path):
    from nightshift.supervisor.config.schema import parse_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET

    def sockets(command: str) -> tuple:
        text = f'goal = "g"\n[backend]\nkind = "local"\n[oracle]\ncommand = {json.dumps(command)}\n'
        return boundary_for(tmp_path, parse_config(text, "nightshift.toml")).sockets

    assert MUNGE_SOCKET in sockets("make && srun --mpi=pmi2 -n 2 ./solver")
    assert MUNGE_SOCKET not in sockets("python srun_like.py && ./bin/srun-report")
