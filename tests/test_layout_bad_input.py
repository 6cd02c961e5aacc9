"""What a file states that cannot be used is named, never used and never fatal: a time coordinate, a dimension scale
or a grid attribute of the wrong length, a ``data_length`` that is no row count. And a hint is right or absent:
no ``interpolate`` where interpolation cannot help (no x column, a field of another shape)."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.verify.oracle.check import _one
from nightshift.supervisor.verify.oracle.field import open_field
from tests.fixtures_core import nightshift
from tests.fixtures_layouts import GRID, write_pde_storage

GOAL = "agree to 1e-6 relative"


def field_values(rows: int = 11) -> np.ndarray:
    t, x, y = np.meshgrid(np.arange(rows, dtype=float), np.arange(24) + 0.5, np.arange(24) + 0.5, indexing="ij")
    return 2 + np.exp(-0.1 * t) * np.sin(0.3 * x + 0.2 * y)


def test_a_time_coordinate_of_the_wrong_length_is_named_and_not_used(tmp_path):
    root = tmp_path / "ws"
    values = field_values()
    write_pde_storage(root / "reference" / "trajectory.h5", values, np.arange(11.0))
    with h5py.File(root / "reference" / "trajectory.h5", "r+") as f:
        del f["times"]
        f["times"] = np.arange(10.0)  # one output time short
    done = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--yes")
    assert done.returncode == 0, done.stderr
    named = "/times holds 10 values but /data has 11 rows: not used as its coordinate"
    assert named in done.stdout and named in (root / "nightshift.toml").read_text(), done.stdout
    assert "located by x, y from its grid attribute" in done.stdout  # the grid still locates the other axes
    moved = values.copy()
    moved[4, 10, 13] *= 1.001
    write_pde_storage(root / "out" / "trajectory.h5", moved, np.arange(11.0))
    with h5py.File(root / "out" / "trajectory.h5", "r+") as f:
        del f["times"]
        f["times"] = np.arange(10.0)
    shown = nightshift("compare", str(root))
    assert "Traceback" not in shown.stderr and shown.returncode == 1
    assert "x=10.5, y=13.5 (index (4, 10, 13))" in shown.stdout and "t=" not in shown.stdout, shown.stdout
    assert named in shown.stdout, shown.stdout  # the report's note


def _with(path, values, **attrs):
    with h5py.File(path, "w") as f:
        f["data"] = values
        for key, value in attrs.items():
            f.attrs[key] = value
    return path


@pytest.mark.parametrize("stated, words", [
    ("'eleven'", "data_length = \"'eleven'\" is not a number of rows: every row is compared"),
    ("0", "data_length = 0 is not between 1 and the 11 rows written: every row is compared"),
    ("40", "data_length = 40 is not between 1 and the 11 rows written: every row is compared"),
    ("2.5", "data_length = '2.5' is not a number of rows: every row is compared"),
])
def test_a_stated_length_that_is_no_row_count_is_named_and_every_row_compared(tmp_path, stated, words):
    path = _with(tmp_path / "f.h5", field_values(), data_length=stated)
    with open_field(path, "/data", "reference") as found:
        assert found.shape == (11, 24, 24) and found.written is None
        assert any(words in note for note in found.notes), found.notes


def test_a_grid_attribute_of_another_shape_and_a_short_dimension_scale_are_named_not_used(tmp_path):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f["data"] = field_values()
        f.attrs["grid"] = json.dumps({**GRID, "shape": [32, 32]})
        scale = f.create_dataset("t", data=np.arange(9.0))
        scale.make_scale("t")
        f["data"].dims[0].attach_scale(scale)
    with open_field(path, "/data", "reference") as found:
        assert found.coords == [None, None, None] and found.dims == ["t", "j", "k"]
        said = " | ".join(found.notes)
        assert "a grid attribute states shape [32, 32], not the field's last axes [24, 24]: not used" in said, said
        assert "the dimension scale /t holds 9 values but axis 0 of /data has 11: not used" in said, said


def test_a_grid_is_read_from_json_only_and_nested_json_is_followed(tmp_path):
    path = _with(tmp_path / "f.h5", field_values(), attrs=json.dumps({"a": json.dumps({"grid": json.dumps(GRID)})}),
                 code="__import__('os').system('touch pwned')")
    with open_field(path, "/data", "reference") as found:
        assert found.dims[1:] == ["x", "y"] and found.coords[1][10] == 10.5 and found.coords[2][13] == 13.5
    assert not (tmp_path / "pwned").exists()


def _table(path, rows: int, x: bool):
    grid = np.linspace(1, 2, rows)
    np.savetxt(path, np.column_stack([grid, grid ** 2]) if x else (grid ** 2)[:, None], fmt="%.17g")


@pytest.mark.parametrize("x", [None, 0])
def test_a_hint_to_interpolate_only_where_an_x_makes_it_possible(tmp_path, x):
    (tmp_path / "reference").mkdir()
    (tmp_path / "out").mkdir()
    _table(tmp_path / "reference" / "t.dat", 20, x is not None)
    _table(tmp_path / "out" / "t.dat", 16, x is not None)
    comp = CompareConfig(name="t", candidate="out/t.dat", reference="reference/t.dat", x=x,
                         columns=[1] if x is not None else [0], rtol=1e-6)
    entry = _one(comp, tmp_path, None)
    assert entry["error"].startswith("the candidate has 16 rows to compare and the reference 20"), entry["error"]
    assert ("interpolate = 'linear'" in entry["error"]) == (x is not None), entry["error"]


def test_a_field_of_another_rank_gets_no_interpolation_hint(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "out").mkdir()
    np.save(tmp_path / "reference" / "u.npy", field_values(3))
    np.save(tmp_path / "out" / "u.npy", field_values(3)[0])
    entry = _one(CompareConfig(name="u", candidate="out/u.npy", reference="reference/u.npy"), tmp_path, None)
    assert "shape" in entry["error"] and "interpolate" not in entry["error"], entry["error"]


def test_a_candidates_links_and_hostile_attributes_are_not_followed(tmp_path):
    """The candidate is a stranger's file: an external link beside its field (to a file it names) is no coordinate
    and is never opened; an attribute nested beyond reason, or of a thousand attributes, is no grid and no crash."""
    outside = tmp_path / "outside.h5"
    with h5py.File(outside, "w") as f:
        f["times"] = np.arange(11.0)
    path = tmp_path / "cand.h5"
    with h5py.File(path, "w") as f:
        f["data"] = field_values()
        f["times"] = h5py.ExternalLink(str(outside), "/times")  # followed, it would be the field's coordinate
        f["data"].attrs["deep"] = "[" * 200_000
        for i in range(1000):
            f.attrs[f"a{i}"] = "{}"
        f.attrs["zz_grid"] = json.dumps(GRID)  # beyond the attributes looked at
    with open_field(path, "/data", "candidate") as found:
        assert found.shape == (11, 24, 24) and found.coords == [None, None, None], found.dims
