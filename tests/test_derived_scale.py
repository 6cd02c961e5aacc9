"""What `nightshift init` derives an absolute floor from (cli/init/scales.py) is measured over the rows that
are data: a preallocated HDF5 field with a stated data_length has the scale of its first data_length rows, the
unwritten rows past it (zeros, a fill value) count for nothing, whichever way the field is sliced."""
from __future__ import annotations

import numpy as np
import pytest

from nightshift.supervisor.cli.init.scales import field_scale
from nightshift.supervisor.verify.oracle.field import FirstRows

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
    assert preallocated == written and preallocated.values == data.size and preallocated.largest == data.max(), \
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
    from nightshift.supervisor.verify.oracle import hdf5_layout
    from nightshift.supervisor.verify.oracle.field import open_field

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


def test_a_reference_with_no_scale_is_named_for_what_it_is():
    """One sentence for init and the calibration alike, and "zero everywhere" only of what is: a reference with no
    finite value has nothing to compare, and tolerance = "both" with an atol set needs another mode, not an atol."""
    from nightshift.supervisor.cli.init.derived_atol import Derived
    from nightshift.supervisor.verify.oracle.roundoff import Floor
    from nightshift.supervisor.verify.oracle.calibrate import zero_tolerance

    nan = np.full(20, np.nan)
    zeros = np.zeros(20)
    said = zero_tolerance("u", nan, "point", "sum")
    assert said.startswith("u: the reference has no finite value") and "zero everywhere" not in said, said
    assert Derived("", "reference/u.npy", 1e-6, Floor(0.0, 0.0, np.inf, 2.2e-16, 0, 20, 0, 0, 0)).needs_atol() == \
        "reference/u.npy" + said.removeprefix("u: the reference")
    zero = zero_tolerance("u", zeros, "point", "sum")
    assert zero.startswith("u: the reference is zero everywhere") and "needs an absolute tolerance" in zero, zero
    assert Derived("", "reference/u.npy", 1e-6, Floor(0.0, 0.0, np.inf, 2.2e-16, 20, 20, 20, 0, 0)).needs_atol() == \
        "reference/u.npy" + zero.removeprefix("u: the reference")
    both = zero_tolerance("u", zeros, "point", "both")
    assert "needs an absolute tolerance" not in both and 'use tolerance = "sum" or "either"' in both, both
    assert zero_tolerance("u", np.arange(1.0, 21.0), "element", "both").endswith(
        "the tolerance is zero at every element (tolerance = \"both\" takes the smaller of rtol x |reference| and "
        "atol, and atol = 0): any difference at all fails; set atol")
