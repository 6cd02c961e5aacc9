"""A field that is zero by symmetry on two grid rows, as two backends compute it (issue 35): the reference code
writes u = sin(pi x) (1 + y), exactly 0 at x = 0 and round-off (1.2e-16) at x = 1; the same scheme on another
backend computes cos(pi (x - 1/2)) (1 + y), equal to ~1e-16 relative elsewhere and off by ~6e-17 on those two rows,
which is "1.0 relative" there.

``WRITER`` writes the field as HDF5 (with dimension scales), .npy and NetCDF-4, and its y = 0 column as a text
table; the tests write the references with it, and the scripted agent's solvers carry it as their own source (a
solver computes; it never reads a reference). ``SOLVER`` is the honest one; ``WRONG`` moves the physics by 1e-4
where x > 1/2; ``ZEROED`` leaves out every value below a quarter of the largest, where a derived floor would be the
place to hide.
"""
from __future__ import annotations

import numpy as np

WRITER = '''
from pathlib import Path
import numpy as np

X = np.arange(-4, 12) / 8.0  # 16 rows, x = 0 (row 4) and x = 1 (row 12) among them, exactly
Y = np.linspace(0.0, 1.0, 12)


def backend_field():
    return np.cos(np.pi * (X - 0.5))[:, None] * (1 + Y)[None, :]


def write_all(folder, u):
    import h5py
    import netCDF4

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with h5py.File(folder / "flow.h5", "w") as f:
        xs, ys = f.create_dataset("x", data=X), f.create_dataset("y", data=Y)
        xs.make_scale("x")
        ys.make_scale("y")
        dset = f.create_dataset("u", data=u)
        dset.dims[0].attach_scale(xs)
        dset.dims[1].attach_scale(ys)
    np.save(folder / "u.npy", u)
    with netCDF4.Dataset(str(folder / "flow.nc"), "w") as f:
        for dim, values in (("x", X), ("y", Y)):
            f.createDimension(dim, len(values))
            f.createVariable(dim, "f8", (dim,))[:] = values
        f.createVariable("u", "f8", ("x", "y"))[:] = u
    np.savetxt(folder / "profile.dat", np.column_stack([X + 2.0, u[:, 0]]), header="1:x 2:u", fmt="%.17g")
'''
_RUN: dict = {}
exec(WRITER, _RUN)  # the very code the solvers run
X, Y, backend_field, write_all = _RUN["X"], _RUN["Y"], _RUN["backend_field"], _RUN["write_all"]

ZERO_ROWS = (4, 12)
SOLVER = WRITER + "write_all('out', backend_field())\n"
WRONG = WRITER + "u = backend_field()\nu[X > 0.5] *= 1 + 1e-4\nwrite_all('out', u)\n"
ZEROED = WRITER + "u = backend_field()\nu[np.abs(u) < 0.25 * np.abs(u).max()] = 0.0\nwrite_all('out', u)\n"


def reference_field() -> np.ndarray:
    return np.sin(np.pi * X)[:, None] * (1 + Y)[None, :]
