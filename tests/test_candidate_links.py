"""A candidate that names a reference instead of holding values: a link to the reference file inside the workspace
(read through it, it is the reference's own bytes), an HDF5 soft or external link, a virtual dataset or external raw
storage (values kept in other files, such as the reference). Each is refused with a one-line error; a hard-linked
path to a plain dataset still reads."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.verify.oracle.check import _one
from nightshift.supervisor.verify.oracle.copies import reference_inodes
from nightshift.supervisor.verify.oracle.field import open_field
from nightshift.supervisor.verify.oracle.readers import read_table
from nightshift.supervisor.verify.oracle.table import OracleInputError

h5py = pytest.importorskip("h5py")


class Config:
    def __init__(self, *compare):
        self.compare = list(compare)


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "out").mkdir()
    return tmp_path


@pytest.mark.parametrize("link", ["symlink", "hard link", "linked folder"])
def test_a_candidate_that_is_the_reference_file_is_refused_as_a_copy(ws, link):
    np.savetxt(ws / "reference" / "cl.dat", np.random.default_rng(1).random((50, 2)))
    candidate = "out/cl.dat"
    if link == "symlink":
        os.symlink("../reference/cl.dat", ws / candidate)
    elif link == "hard link":
        os.link(ws / "reference" / "cl.dat", ws / candidate)
    else:
        os.symlink("reference", ws / "copied")
        candidate = "copied/cl.dat"
    comp = CompareConfig(name="cl", candidate=candidate, reference="reference/cl.dat", rtol=1e-6)
    inodes = reference_inodes(Config(comp), {"cl": ws / "reference" / "cl.dat"})
    entry = _one(comp, ws, None, None, inodes)
    assert not entry["passed"] and entry["error_kind"] == "copy of a reference", entry
    assert entry["error"].startswith(f"{candidate} is reference/cl.dat itself (a link to it)"), entry["error"]
    np.savetxt(ws / "out" / "other.dat", np.loadtxt(ws / "reference" / "cl.dat"))  # its own file: compared
    own = CompareConfig(name="cl", candidate="out/other.dat", reference="reference/cl.dat", rtol=1e-6)
    assert _one(own, ws, None, None, inodes)["passed"]


def test_a_held_out_reference_is_named_only_as_such(ws, tmp_path):
    held = tmp_path / "store.dat"
    np.savetxt(held, np.random.default_rng(2).random((50, 2)))
    comp = CompareConfig(name="h", candidate="out/h.dat", reference=str(held), rtol=1e-6, heldout=True)
    assert reference_inodes(Config(comp), {"h": held}) == {(held.stat().st_dev, held.stat().st_ino):
                                                           "a held-out reference"}


def reference_h5(ws: Path) -> Path:
    path = ws / "reference" / "final.h5"
    with h5py.File(path, "w") as f:
        f["data"] = np.random.default_rng(3).random((30, 4, 5))
        f["t"] = np.linspace(0.0, 1.0, 30)
    return path


@pytest.mark.parametrize("part", ["/data", "/g/data"])
def test_an_hdf5_link_to_the_reference_is_not_followed(ws, part):
    ref = reference_h5(ws)
    cand = ws / "out" / "final.h5"
    with h5py.File(cand, "w") as f:
        f["data"] = h5py.ExternalLink(str(ref), "/data")
        f["g"] = h5py.ExternalLink(str(ref), "/")
        f["own"] = np.zeros(3)
        f["soft"] = h5py.SoftLink("/own")
    with pytest.raises(OracleInputError, match="is an external link: not followed") as field_error:
        with open_field(cand, part, "candidate"):
            pass
    assert field_error.value.kind == "untrusted file"
    with pytest.raises(OracleInputError, match="is an external link: not followed"):
        read_table(cand, part)
    with pytest.raises(OracleInputError, match="soft is a soft link: not followed"):
        read_table(cand, "/soft")
    whole = read_table(cand)  # the group's own members only: the links are left out, not followed
    assert len(whole.columns) == 1 and list(whole.columns[0]) == [0.0, 0.0, 0.0], whole


def test_values_kept_in_other_files_are_not_read(ws):
    ref = reference_h5(ws)
    layout = h5py.VirtualLayout(shape=(30, 4, 5), dtype="f8")
    layout[:] = h5py.VirtualSource(str(ref), "data", shape=(30, 4, 5))
    raw = ws / "out" / "raw.bin"
    np.random.default_rng(4).random(30).tofile(raw)
    cand = ws / "out" / "v.h5"
    with h5py.File(cand, "w") as f:
        f.create_virtual_dataset("data", layout)
        f.create_dataset("t", shape=(30,), dtype="f8", external=[(str(raw), 0, 240)])
    with pytest.raises(OracleInputError, match="keeps its values in other files"):
        with open_field(cand, "/data", "candidate"):
            pass
    for part in ("/data", "/t", None):
        with pytest.raises(OracleInputError, match="keeps its values in other files"):
            read_table(cand, part)


def test_a_stale_candidate_that_is_a_link_is_removed_itself_never_its_target(ws):
    from nightshift.supervisor.verify.oracle.check import _clean_candidates

    (ws / "reference" / "cl.dat").write_text("1 2\n")
    (ws / "solver.py").write_text("print('the solver')\n")
    os.symlink("../reference/cl.dat", ws / "out" / "cl.dat")
    os.symlink("../solver.py", ws / "out" / "tt.dat")
    entries = [CompareConfig(name=n, candidate=f"out/{n}.dat", reference="reference/cl.dat", rtol=1e-6)
               for n in ("cl", "tt")]
    _clean_candidates(entries, ws)
    assert not os.path.lexists(ws / "out" / "cl.dat") and not os.path.lexists(ws / "out" / "tt.dat")
    assert (ws / "reference" / "cl.dat").read_text() == "1 2\n" and (ws / "solver.py").exists()
