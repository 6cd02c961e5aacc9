"""Fields, not tables: a solver's N-d outputs (HDF5 with dimension scales, NetCDF-4 and NetCDF-3 with coordinates,
.npz, .npy) from `nightshift init --reference-dir` to `nightshift compare`, as a new user meets them.

init writes one short block per file (the fields by name, no column lists); an honest solver with a zero field and
a constant field passes; one element off by 10x the tolerance fails there, named by index and coordinates; a
copied field is still a copy.
"""
from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest

from nightshift.supervisor.config.schema import load_config
from tests.fixtures_core import nightshift
from tests.fixtures_fields import (HDF5_FIELDS, X, Y, Z, hydro_state, noisy, temperature_3d, write_hdf5,
                                   write_netcdf, write_npz)

GOAL = "the fields agree with the reference code to 1e-10 relative, 1e-14 absolute"


@pytest.fixture
def ws(tmp_path):
    """A workspace whose references are a hydro code's HDF5 state, a NetCDF-4 3-D field with its coordinates, a
    classic NetCDF-3 file and an .npz; init from defaults with the goal's tolerances."""
    root = tmp_path / "ws"
    state = hydro_state()
    write_hdf5(root / "reference" / "tube.h5", state)
    write_netcdf(root / "reference" / "climate.nc", temperature_3d())
    write_netcdf(root / "reference" / "surface.nc", temperature_3d()[:, :, 0], fmt="NETCDF3_CLASSIC")
    write_npz(root / "reference" / "slices.npz", {"rho": state["rho"], "momx": state["momx"]})
    np.save(root / "reference" / "cube.npy", temperature_3d())
    done = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--yes")
    assert done.returncode == 0, done.stderr
    return root


def honest_outputs(root, move: tuple | None = None, factor: float = 1.0):
    """The solver's outputs: every field to ~12 digits; ``move`` = (file, field, index) moves one element."""
    state = {k: noisy(v) for k, v in hydro_state().items()}
    cube = noisy(temperature_3d())
    if move and move[0] == "tube.h5":
        state[move[1]][move[2]] *= factor
    if move and move[0] == "climate.nc":
        cube[move[2]] *= factor
    write_hdf5(root / "out" / "tube.h5", state)
    write_netcdf(root / "out" / "climate.nc", cube)
    surface = noisy(temperature_3d()[:, :, 0])
    if move and move[0] == "surface.nc":
        surface[move[2]] *= factor
    write_netcdf(root / "out" / "surface.nc", surface, fmt="NETCDF3_CLASSIC")
    write_npz(root / "out" / "slices.npz", {"rho": state["rho"], "momx": state["momx"]})
    np.save(root / "out" / "cube.npy", noisy(temperature_3d()))


def compare(root, *extra) -> tuple[int, dict | str]:
    done = nightshift("compare", str(root), *extra)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout) if "--json" in extra else done.stdout


def test_init_writes_one_short_block_per_file_with_its_fields_by_name(ws):
    text = (ws / "nightshift.toml").read_text()
    assert "columns = [0, 1" not in text and len(text) < 5000, text  # with the judge line and the layout notes
    blocks = tomllib.loads(text)["oracle"]["compare"]
    by_ref = {b["reference"]: b for b in blocks}
    assert by_ref["reference/tube.h5"]["fields"] == [f"/state/{n}/data" for n in sorted(HDF5_FIELDS)]
    assert by_ref["reference/climate.nc"]["fields"] == ["T"]
    assert by_ref["reference/surface.nc"]["fields"] == ["T"]
    assert by_ref["reference/slices.npz"]["fields"] == ["rho", "momx"]
    assert "fields" not in by_ref["reference/cube.npy"] and "columns" not in by_ref["reference/cube.npy"]
    assert all(b["rtol"] == 1e-10 and b["atol"] == 1e-14 for b in blocks)  # both from the goal's words
    assert "# 5 fields of 48 x 32: each compared over all its elements" in text
    oracle = load_config(ws).oracle  # each field is its own comparison
    assert "tube:state/momy/data" in [c.name for c in oracle.compare] and len(oracle.compare) == 10


def test_an_honest_solver_with_a_zero_field_and_a_constant_field_passes(ws):
    honest_outputs(ws)
    code, report = compare(ws, "--json")
    assert code == 0, report["summary"]
    assert not report["problems"], report["problems"]  # no "copy" for the zero and the constant field
    zero = next(e for e in report["comparisons"] if e["name"] == "tube:state/momy/data")
    assert zero["passed"] and zero["columns"][0]["max_rel"] == 0 and zero["distinct"] == 0
    code, table = compare(ws)
    lines = [line for line in table.splitlines() if line.startswith(("tube", "climate", "surface", "slices", "cube"))]
    assert len(lines) == 10, table  # one line per field


@pytest.mark.parametrize("target, index, words", [
    ("tube.h5", (17, 5), "x=0.361702, y=0.322581 (index (17, 5))"),
    ("climate.nc", (9, 20, 4), "x=0.191489, y=1.29032, z=0.6 (index (9, 20, 4))"),
    ("surface.nc", (40, 2), "x=0.851064, y=0.129032 (index (40, 2))"),
])
def test_one_element_off_by_ten_times_the_tolerance_fails_there_by_index_and_coordinates(ws, target, index, words):
    field = "rho" if target == "tube.h5" else "T"
    honest_outputs(ws, (target, field, index), 1 + 1e-9)
    code, report = compare(ws, "--json")
    assert code == 1
    failing = [e for e in report["comparisons"] if not e["passed"]]
    assert len(failing) == 1 + (target == "tube.h5"), [e["name"] for e in failing]  # slices.npz:rho shares rho
    entry = next(e for e in failing if not e["name"].startswith("slices"))
    col = entry["columns"][0]
    assert col["failing"] == 1 and col["index_worst"] == list(index) and col["where_worst"] == words
    assert 9 < col["ratio"] < 11 and col["points"] == int(np.prod(entry["shape"]))
    code, table = compare(ws)
    assert f"{entry['name']} " in table and words in table


def test_a_copied_field_is_still_a_copy_and_a_copied_zero_field_is_not(ws):
    honest_outputs(ws)
    write_hdf5(ws / "out" / "tube.h5", hydro_state())  # every field copied from the reference, bit for bit
    code, report = compare(ws, "--json")
    assert code == 1
    # no oracle command wrote it (the user's compare of files in place): an exact match is not shown computed
    copies = [p for p in report["problems"] if "may be a copy of" in p and "no oracle command ran" in p]
    assert sorted(p.split(" may be a copy")[0] for p in copies) == ["out/tube.h5:/state/energy/data",
                                                               "out/tube.h5:/state/momx/data",
                                                               "out/tube.h5:/state/rho/data"]


def test_compare_prints_one_line_per_comparison_and_the_columns_when_asked(tmp_path):
    root = tmp_path / "ws"
    (root / "reference").mkdir(parents=True)
    grid = np.linspace(0.1, 2, 30)
    rows = np.column_stack([grid, grid ** 2 + 1, np.sin(grid) + 2, np.cos(grid) + 3])
    np.savetxt(root / "reference" / "t.dat", rows, header="x a b c", fmt="%.17g")
    assert nightshift("init", str(root), "--goal", "to 0.1%", "--reference-dir", "reference", "--yes").returncode == 0
    (root / "out").mkdir()
    np.savetxt(root / "out" / "t.dat", rows * [1, 1, 1.01, 1], header="x a b c", fmt="%.17g")
    code, table = compare(root)
    assert code == 1 and "b (worst of 3)" in table and "  a  " not in table
    code, table = compare(root, "--columns")
    assert code == 1 and all(f"  {c}  " in table for c in "abc"), table


def test_per_field_tolerance_and_the_combination_modes(ws):
    honest_outputs(ws, ("tube.h5", "rho", (3, 3)), 1 + 1e-9)
    toml = ws / "nightshift.toml"
    text = toml.read_text().replace('reference = "reference/tube.h5"',
                                    'reference = "reference/tube.h5"\nper_field."/state/rho/data" = { rtol = 1e-8 }')
    toml.write_text(text)
    code, report = compare(ws, "--json")
    rho = next(e for e in report["comparisons"] if e["name"] == "tube:state/rho/data")
    assert rho["passed"] and rho["columns"][0]["rtol"] == 1e-8
    toml.write_text(text.replace('\nper_field."/state/rho/data"', '\ntolerance = "both"\nper_field."/state/rho/data"'))
    code, report = compare(ws, "--json")
    rho = next(e for e in report["comparisons"] if e["name"] == "tube:state/rho/data")
    assert not rho["passed"]  # both: the 1e-14 absolute tolerance holds too, and rho ~ 1 misses it by 1e-9


def test_the_tui_oracle_tab_shows_a_field_as_one_row_located_by_coordinates(ws):
    from nightshift.tui.oracle_report import rows_from_report
    from nightshift.tui.widgets.oracle_view import row_cells

    honest_outputs(ws, ("climate.nc", "T", (9, 20, 4)), 1 + 1e-9)
    code, report = compare(ws, "--json")
    rows = [r for r in rows_from_report(report) if r.comparison == "climate:T"]
    assert len(rows) == 1 and rows[0].column == "(field)" and rows[0].passed is False
    cells = [str(c) for c in row_cells(rows[0])]
    assert "x=0.191489, y=1.29032, z=0.6 (index (9, 20, 4))" in cells and "FAIL" in cells


def test_check_calibrates_a_field_and_a_table_whose_header_repeats_names(ws):
    """The calibration gate of `nightshift check`, on a field and on `# nx aerr rerr aerr rerr`."""
    from nightshift.supervisor.verify.oracle.calibrate import calibrate
    from nightshift.supervisor.verify.oracle.calibrate_field import calibrate_field
    from nightshift.supervisor.verify.oracle.readers import read_table

    oracle = load_config(ws).oracle
    by_name = {c.name: c for c in oracle.compare}
    rho = calibrate_field(by_name["tube:state/rho/data"], ws / "reference" / "tube.h5", "/state/rho/data")
    assert rho.ok and "10x the tolerance at one element is caught there; a constant fails" in rho.checked
    zero = calibrate_field(by_name["tube:state/momy/data"], ws / "reference" / "tube.h5", "/state/momy/data")
    assert any("the reference field is all zeros" in p for p in zero.problems)  # said, never a copy finding
    nx = np.array([16, 32, 64, 128, 256], dtype=float)
    rows = np.column_stack([nx, 3.1 / nx ** 2, 2.2 / nx ** 2, 5.3 / nx ** 1.5, 4.4 / nx ** 1.5])
    np.savetxt(ws / "conv.dat", rows, header="nx aerr rerr aerr rerr", fmt="%.17g")
    from nightshift.supervisor.config.oracle import CompareConfig
    table = CompareConfig(name="conv", candidate="c.dat", reference="conv.dat", x="nx", columns=[1, 2, 3, 4])
    assert calibrate(table, read_table(ws / "conv.dat")).ok


def test_a_miss_where_the_reference_is_zero_is_told_as_an_absolute_error_never_0_over_0(ws):
    honest_outputs(ws)
    state = {k: noisy(v) for k, v in hydro_state().items()}
    state["momy"][5, 6] = 1e-10  # the solver leaks momentum into a direction the problem does not have
    write_hdf5(ws / "out" / "tube.h5", state)
    code, table = compare(ws)
    assert code == 1
    assert ("tube:state/momy/data abs err 1.00e-10 > atol 1e-14 where the reference is 0, at x=0.106383, "
            "y=0.387097 (index (5, 6))") in table, table
    assert "nan" not in table.lower()


def test_init_reads_a_fields_own_tolerance_from_the_goal(tmp_path):
    """A goal that names fields ("momx to 1e-8 relative, 1e-12 absolute and cube to 1e-6 relative") gives those
    fields their own tolerance (per_field, or the whole-file field's block); the rest keep what the goal says of
    everything. A one-letter name (T) is not read as a field's: too easily an ordinary word."""
    root = tmp_path / "ws"
    write_hdf5(root / "reference" / "tube.h5", hydro_state())
    np.save(root / "reference" / "cube.npy", temperature_3d())
    write_netcdf(root / "reference" / "climate.nc", temperature_3d())
    goal = ("agree with the reference code to 1e-10 relative, 1e-14 absolute; momx to 1e-8 relative, 1e-12 absolute "
            "and cube to 1e-6 relative. T to 1e-2")
    done = nightshift("init", str(root), "--goal", goal, "--reference-dir", "reference", "--yes")
    assert done.returncode == 0, done.stderr
    text = (root / "nightshift.toml").read_text()
    by_ref = {b["reference"]: b for b in tomllib.loads(text)["oracle"]["compare"]}
    tube, cube, climate = by_ref["reference/tube.h5"], by_ref["reference/cube.npy"], by_ref["reference/climate.nc"]
    assert (tube["rtol"], tube["atol"]) == (1e-10, 1e-14)
    assert tube["per_field"] == {"/state/momx/data": {"rtol": 1e-8, "atol": 1e-12}}
    assert "tolerance from the goal ('1e-8 relative, 1e-12 absolute')" in text
    assert (cube["rtol"], cube["atol"]) == (1e-6, 1e-14)  # an absolute floor it does not state: the goal's
    assert (climate["rtol"], climate["atol"]) == (1e-10, 1e-14)
    assert "momx: its own tolerance from the goal ('1e-8 relative, 1e-12 absolute'): rtol = 1e-08" in done.stdout
    oracle = {c.name: c for c in load_config(root).oracle.compare}  # the config takes what init wrote
    assert (oracle["tube:state/momx/data"].rtol, oracle["tube:state/momx/data"].atol) == (1e-8, 1e-12)
    assert oracle["tube:state/rho/data"].rtol == 1e-10
