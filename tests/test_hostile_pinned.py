"""Issue 27, item 4, the race: the oracle checks a candidate (a regular file, no link out) and then its readers open
it by path, while the agent's processes may still run (a session's agent waits at its Stop hook; a background loop
outlives a turn). A candidate swapped for a link to another file between the check and the read must never be read:
the check pins the file it opened, and every reader (text, .npy, .npz, HDF5, NetCDF) reads that file."""
from __future__ import annotations

import os

import numpy as np
import pytest

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.verify.oracle.field import open_field
from nightshift.supervisor.verify.oracle.readers import read_table
from tests.fixtures_fields import hydro_state, temperature_3d, write_hdf5, write_netcdf, write_npz


def _text(path, values):
    path.write_text("# x y\n" + "".join(f"{i} {float(v)!r}\n" for i, v in enumerate(values)))


WRITERS = {
    "result.dat": lambda p, k: _text(p, hydro_state()["rho"][:, 0] * k),
    "field.npy": lambda p, k: np.save(p, temperature_3d() * k),
    "state.npz": lambda p, k: write_npz(p, {n: v * k for n, v in hydro_state().items()}),
    "state.h5": lambda p, k: write_hdf5(p, {n: v * k for n, v in hydro_state().items()}),
    "t.nc": lambda p, k: write_netcdf(p, temperature_3d() * k),
}
PARTS = {"state.npz": "rho", "state.h5": "/state/rho/data", "t.nc": "T"}


def _values(path, part) -> np.ndarray:
    with open_field(path, part, "candidate") as field:
        if field is not None:
            return np.asarray(field.source[...], dtype=float).ravel()
    return np.concatenate([np.asarray(c, dtype=float) for c in read_table(path, part).columns])


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_candidate_swapped_for_a_link_after_the_check_is_never_read(tmp_path, name):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "out").mkdir(parents=True)
    outside.mkdir()
    candidate, secret = ws / "out" / name, outside / name
    WRITERS[name](candidate, 1.0)
    WRITERS[name](secret, 7.0)  # another file of the same kind: readable, if it were ever opened
    honest = _values(candidate, PARTS.get(name))
    with untrusted.pinned(ws, candidate) as pinned:
        assert str(pinned) == str(candidate) and pinned.suffix == candidate.suffix  # named as the user wrote it
        os.replace(candidate, ws / "out" / "moved-away")  # the agent's swap, after the check
        os.symlink(secret, candidate)
        read = _values(pinned, PARTS.get(name))
    assert np.array_equal(read, honest) and not np.array_equal(read, honest * 7.0)


def test_a_link_out_at_the_check_is_refused_before_any_reader(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.dat").write_text("# x y\n1 2\n")
    os.symlink(tmp_path / "secret.dat", ws / "result.dat")
    with pytest.raises(untrusted.Untrusted, match="result.dat is a symlink out of the workspace"):
        with untrusted.pinned(ws, "result.dat"):
            pass
