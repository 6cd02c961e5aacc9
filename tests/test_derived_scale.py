"""The scale `nightshift init` derives an absolute tolerance from (cli/init/scales.py) is the scale of the rows that
are data: a preallocated HDF5 field with a stated data_length has the scale of its first data_length rows, the
unwritten rows past it (zeros, a fill value) count for nothing, whichever way the field is sliced."""
from __future__ import annotations

import numpy as np
import pytest

from supervisor.cli.init.scales import field_scale
from supervisor.verify.oracle.field import FirstRows

h5py = pytest.importorskip("h5py")


@pytest.mark.parametrize("fill", [0.0, 1e6])
def test_a_preallocated_field_has_the_scale_of_its_rows_that_are_data(tmp_path, fill):
    data = np.random.default_rng(5).random((40, 6, 5)) + 1.0
    with h5py.File(tmp_path / "written.h5", "w") as f:
        f["data"] = data
    with h5py.File(tmp_path / "preallocated.h5", "w") as f:
        f["data"] = np.concatenate([data, np.full((60, 6, 5), fill)])
        f["data"].attrs["data_length"] = 40
    written, preallocated = field_scale(tmp_path / "written.h5", "/data"), field_scale(tmp_path / "preallocated.h5",
                                                                                      "/data")
    assert preallocated.rms == written.rms and preallocated.values == written.values == data.size, \
        (preallocated, written)


def test_first_rows_reads_only_the_rows_that_are_data_for_every_whole_key():
    source = np.arange(100.0).reshape(20, 5)
    rows = FirstRows(source, 8)
    for key in [(), Ellipsis, slice(None)]:
        assert rows[key].shape == (8, 5), key
    assert rows[..., 1].tolist() == source[:8, 1].tolist()
    assert rows[-1].tolist() == source[7].tolist() and rows[2:4, 0].tolist() == [10.0, 15.0]
    with pytest.raises(IndexError):
        rows[8]


def test_a_fields_group_is_laid_out_once_however_many_scales_it_has(tmp_path, monkeypatch):
    from supervisor.verify.oracle import hdf5_layout
    from supervisor.verify.oracle.field import open_field

    path = tmp_path / "scaled.h5"
    with h5py.File(path, "w") as f:
        f["data"] = np.random.default_rng(6).random((12, 8, 5)) + 1.0
        for axis, (name, n) in enumerate([("t", 12), ("x", 8), ("y", 5)]):
            f[name] = np.linspace(0.0, 1.0, n)
            f[name].make_scale(name)
            f["data"].dims[axis].attach_scale(f[name])
        f.create_group("other")["z"] = np.linspace(0.0, 1.0, 12)  # a scale of another group: its own layout
        f["other"]["z"].make_scale("z")
        f["data"].dims[0].attach_scale(f["other"]["z"])
    made = []
    real = hdf5_layout.GroupLayout.__init__
    monkeypatch.setattr(hdf5_layout.GroupLayout, "__init__", lambda self, group: made.append(group.name) or
                        real(self, group))
    with open_field(path, "/data", "candidate") as found:
        assert found.dims == ["t", "x", "y"] and all(c is not None for c in found.coords), found
    assert made == ["/"], made
