"""init and the oracle read every file the same way: whatever `nightshift init --reference-dir` writes from a
reference set, the oracle reads, the calibration gate of `nightshift check` accepts, and a candidate identical to
the references passes. Over reference sets drawn from a seeded generator in every layout init supports
(fixtures_layouts.py), and through the real `nightshift check` on one of them.
"""
from __future__ import annotations

import shutil

import pytest

from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.verify.oracle.calibrate import calibrate
from nightshift.supervisor.verify.oracle.calibrate_field import calibrate_field
from nightshift.supervisor.verify.oracle.check import _one
from nightshift.supervisor.verify.oracle.readers import read_table, split_part
from tests.fixtures_core import nightshift
from tests.fixtures_layouts import WRITERS, reference_set

GOAL = "agree with the reference code to 1e-6 relative"
SEEDS = range(12)


def init_from_defaults(root, seed: int):
    files = reference_set(root / "reference", seed)
    done = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--yes")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return files, done.stdout


@pytest.mark.parametrize("seed", SEEDS)
def test_what_init_writes_the_oracle_reads_and_an_identical_candidate_passes(tmp_path, seed):
    root = tmp_path / "ws"
    files, said = init_from_defaults(root, seed)
    assert "skip " not in said, said  # every file of the set is data init reads
    comparisons = load_config(root).oracle.compare
    compared = {split_part(c.reference)[0] for c in comparisons}
    assert compared == {f"reference/{p.name}" for p in files}, said  # each file compared, none lost
    shutil.copytree(root / "reference", root / "out")  # the candidates: the references themselves
    for comp in comparisons:
        path, part = split_part(comp.reference)
        found = calibrate_field(comp, root / path, part) if not comp.columns and comp.x is None else None
        found = found or calibrate(comp, read_table(root / path, part))  # as `nightshift check` reads it
        assert found.ok, (comp.name, found.problems, said)
        entry = _one(comp, root, None)
        assert entry["error"] is None and entry["passed"], (comp.name, entry["error"], said)
        assert entry["ratio"] == 0, (comp.name, entry["ratio"])


def test_the_draws_cover_every_layout_init_supports(tmp_path):
    """The seeds above draw every writer, and every kind of HDF5 file among them (flat, nested, scales,
    trajectory, preallocated, a wrong-length time)."""
    import h5py

    seen, kinds = set(), set()
    for seed in SEEDS:
        for path in reference_set(tmp_path / str(seed), seed):
            seen.add(path.name.split("_", 1)[1].rsplit(".", 1)[0])
            if path.suffix == ".h5":
                with h5py.File(path) as f:
                    kinds.add("preallocated" if "data_length" in f.attrs else "trajectory" if "times" in f else
                              "wrong time" if "time" in f else "scales" if "coords" in f else
                              "nested" if "run" in f else "flat")
    assert seen == {w.__name__ for w in WRITERS}
    assert kinds == {"preallocated", "trajectory", "wrong time", "scales", "nested", "flat"}


def test_nightshift_check_reads_every_reference_init_wrote(tmp_path):
    """The issue's failure: `check` said "the reference cannot be read ... holds ['data', 'times']; name one"."""
    root = tmp_path / "ws"
    init_from_defaults(root, 3)
    done = nightshift("check", str(root))
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert not [line for line in lines if "cannot be read" in line], done.stdout
    assert any(line.startswith("ok") and "calibration" in line for line in lines), done.stdout
    assert not [line for line in lines if line.startswith("FAIL") and "calibration" in line], done.stdout


def test_a_netcdf_auxiliary_coordinate_locates_the_worst_element(tmp_path):
    """CF conventions: a 1-D variable a data variable's ``coordinates`` attribute names locates its dimension (and
    is not compared as data of its own)."""
    import netCDF4
    import numpy as np

    for side, factor in (("reference", 1.0), ("out", 1.001)):
        (tmp_path / side).mkdir()
        with netCDF4.Dataset(str(tmp_path / side / "s.nc"), "w") as f:
            f.createDimension("n", 8)
            f.createVariable("longitude", "f8", ("n",))[:] = np.linspace(10, 80, 8)
            var = f.createVariable("T", "f8", ("n",))
            var.coordinates = "longitude"
            values = np.linspace(1, 2, 8)
            values[3] *= factor
            var[:] = values
    done = nightshift("init", str(tmp_path), "--goal", GOAL, "--reference-dir", "reference", "--yes")
    assert done.returncode == 0, done.stderr
    assert "located by longitude from its CF coordinates attribute" in done.stdout, done.stdout
    [comp] = load_config(tmp_path).oracle.compare
    entry = _one(comp, tmp_path, None)
    assert entry["columns"][0]["where_worst"] == "longitude=40 (index (3))", entry


@pytest.mark.parametrize("grid, words", [
    ({"class": "UnitGrid", "shape": [6, 5], "periodic": [True, False]}, "x=3.5, y=2.5 (index (1, 3, 2))"),
    ({"class": "CartesianGrid", "bounds": [[-1, 1], [0, 10]], "shape": [6, 5], "periodic": [True, True]},
     "x=0.166667, y=5 (index (1, 3, 2))"),
    ({"class": "CylindricalSymGrid", "radius": [0, 3], "bounds_z": [0, 5], "shape": [6, 5], "periodic_z": False},
     "r=1.75, z=2.5 (index (1, 3, 2))"),
    ({"class": "PolarSymGrid", "radius": 6, "shape": [5]}, "r=4.2 (index (1, 3, 3))"),  # the last axis only
])
def test_the_grid_classes_a_storage_states_locate_the_last_axes(tmp_path, grid, words):
    """py-pde's grids as its storage writes them (a JSON string inside the JSON of field_attributes): cell centres
    of the stated bounds (a UnitGrid's [0, n], a radial grid's radius and bounds_z)."""
    import json

    import h5py
    import numpy as np

    from nightshift.supervisor.config.oracle import CompareConfig

    shape = (3, 6, 5)  # t, then the grid's axes (a 1-D grid: the last one only)
    for side, factor in (("reference", 1.0), ("out", 1.01)):
        (tmp_path / side).mkdir()
        values = 1.0 + np.arange(np.prod(shape), dtype=float).reshape(shape)
        index = (1, 3, 2) if len(grid["shape"]) == 2 else (1, 3, 3)
        values[index] *= factor
        with h5py.File(tmp_path / side / "s.h5", "w") as f:
            f["times"], f["data"] = np.array([0.0, 0.5, 1.0]), values
            f.attrs["field_attributes"] = json.dumps({"class": json.dumps("ScalarField"), "grid": json.dumps(grid)})
    entry = _one(CompareConfig(name="s", candidate="out/s.h5:/data", reference="reference/s.h5:/data",
                               rtol=1e-6), tmp_path, None)
    assert entry["columns"][0]["where_worst"] == "t=0.5, " + words, entry
