"""Fields as a PDE or climate code writes them, made by the tests themselves: an HDF5 file of ``state/<field>/data``
2-D datasets with dimension scales, NetCDF-4 and classic NetCDF-3 files with coordinate variables (3-D and 2-D), an
``.npz`` of 2-D members and a 3-D ``.npy``. ``write_fields`` writes one set; a solver's candidates are the same
fields changed by the caller (noise, one element moved, a copy).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

NX, NY, NZ = 48, 32, 6
X = np.linspace(0.0, 1.0, NX)
Y = np.linspace(0.0, 2.0, NY)
Z = np.linspace(-1.0, 1.0, NZ)
HDF5_FIELDS = ("rho", "momx", "momy", "energy", "gamma")  # momy: zero (a 1-D problem); gamma: a constant


def hydro_state() -> dict[str, np.ndarray]:
    """A 1-D shock tube's state on a 2-D grid: y-momentum identically zero, the adiabatic index constant."""
    xx, _ = np.meshgrid(X, Y, indexing="ij")
    rho = 1.0 + 0.5 * np.tanh((0.5 - xx) * 20) + 0.01 * np.sin(7 * xx)
    momx = rho * 0.3 * np.exp(-((xx - 0.5) ** 2) * 30)
    return {"rho": rho, "momx": momx, "momy": np.zeros_like(rho), "energy": 2.5 * rho + 0.5 * momx ** 2 / rho,
            "gamma": np.full_like(rho, 1.4)}


def temperature_3d() -> np.ndarray:
    xx, yy, zz = np.meshgrid(X, Y, Z, indexing="ij")
    return 280.0 + 10 * np.sin(3 * xx) * np.cos(2 * yy) + 0.5 * zz + 0.01 * xx * yy


def write_hdf5(path: Path, state: dict[str, np.ndarray]) -> Path:
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        xs, ys = f.create_dataset("coords/x", data=X), f.create_dataset("coords/y", data=Y)
        xs.make_scale("x")
        ys.make_scale("y")
        for name, values in state.items():
            dset = f.create_dataset(f"state/{name}/data", data=values)
            dset.dims[0].attach_scale(xs)
            dset.dims[1].attach_scale(ys)
    return path


def write_netcdf(path: Path, temperature: np.ndarray, pressure: np.ndarray | None = None,
                 fmt: str = "NETCDF4", x: np.ndarray = X) -> Path:
    import netCDF4

    path.parent.mkdir(parents=True, exist_ok=True)
    with netCDF4.Dataset(str(path), "w", format=fmt) as f:
        shape = temperature.shape
        for dim, values in zip(("x", "y", "z"), (x, Y, Z)[:len(shape)]):
            f.createDimension(dim, len(values))
            f.createVariable(dim, "f8", (dim,))[:] = values
        dims = ("x", "y", "z")[:len(shape)]
        f.createVariable("T", "f8", dims)[:] = temperature
        if pressure is not None:
            f.createVariable("p", "f8", dims[:2])[:] = pressure
    return path


def write_npz(path: Path, state: dict[str, np.ndarray]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **state)
    return path


def noisy(values: np.ndarray, rel: float = 1e-12, seed: int = 3) -> np.ndarray:
    """What an honest solver computes: the reference to about 12 digits (zeros stay zero, constants constant)."""
    rng = np.random.default_rng(seed)
    return values * (1 + rng.uniform(-rel, rel, values.shape))
