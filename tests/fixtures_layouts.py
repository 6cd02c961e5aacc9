"""Reference files in every layout `nightshift init --reference-dir` reads, drawn from a seeded generator: text tables
(CLASS-style numbered headers, plain headers, none), CSV and TSV, JSON, .npy (columns, structured, N-d), .npz (columns,
fields, fields beside a coordinate), HDF5 (flat, nested, with dimension scales, a trajectory with its times, a
grid attribute, preallocated rows with ``data_length``, a time coordinate of the wrong length) and NetCDF with
coordinate variables. Each writer takes the generator and a path and writes one file; names, sizes and optional
parts vary with the draw.

Also py-pde's FileStorage layout, as the library writes it (``write_pde_storage``): ``data`` (rows, 24, 24) beside
``times`` (rows), every attribute a JSON string, the grid among them, and with ``allocated`` rows more than written
a ``data_length`` attribute saying how many are data.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

NAMES = ["TT", "EE", "rho", "u", "P", "flux", "H", "D", "energy", "chi"]
GRID = {"class": "CartesianGrid", "bounds": [[0.0, 24.0], [0.0, 24.0]], "shape": [24, 24], "periodic": [True, True]}


def _smooth(rng, shape) -> np.ndarray:
    """Values a solver writes: smooth, away from zero, all different."""
    grids = np.meshgrid(*[np.linspace(0, 1, n) for n in shape], indexing="ij")
    phase = rng.uniform(0, 3, len(shape))
    out = 2.0 + sum(np.sin(3 * g + p) for g, p in zip(grids, phase)) * 0.5
    return out + rng.uniform(0, 1e-3, shape)


def _columns(rng, rows: int, count: int) -> tuple[np.ndarray, list[str]]:
    x = np.sort(rng.uniform(0.1, 10, rows)) + np.arange(rows) * 1e-3
    names = [str(n) for n in rng.choice(NAMES, size=count, replace=False)]
    return np.column_stack([x] + [_smooth(rng, (rows,)) * (i + 1) for i in range(count)]), names


def text_table(rng, path: Path) -> None:
    data, names = _columns(rng, int(rng.integers(5, 60)), int(rng.integers(1, 4)))
    style = int(rng.integers(0, 3))
    header = ["#  " + "  ".join(f"{i + 1}:{n}" for i, n in enumerate(["x"] + names)) + "\n",
              "# x " + " ".join(names) + "\n", ""][style]
    path.write_text(header + "\n".join(" ".join(f"{v:.17g}" for v in row) for row in data) + "\n")


def csv_table(rng, path: Path) -> None:
    """CSV, or TSV (tab-separated, .tsv)."""
    data, names = _columns(rng, int(rng.integers(5, 60)), int(rng.integers(1, 4)))
    sep, suffix = (",", ".csv") if rng.integers(0, 2) else ("\t", ".tsv")
    path.with_suffix(suffix).write_text(sep.join(["z"] + names) + "\n" +
                                        "\n".join(sep.join(f"{v:.17g}" for v in row) for row in data) + "\n")


def json_table(rng, path: Path) -> None:
    data, names = _columns(rng, int(rng.integers(5, 30)), int(rng.integers(1, 3)))
    path.with_suffix(".json").write_text(json.dumps({n: data[:, i].tolist() for i, n in enumerate(["k"] + names)}))


def npy_array(rng, path: Path) -> None:
    kind = int(rng.integers(0, 3))
    if kind == 0:
        np.save(path.with_suffix(".npy"), _smooth(rng, (int(rng.integers(5, 50)),)))
    elif kind == 1:
        data, names = _columns(rng, int(rng.integers(5, 50)), 2)
        rec = np.empty(len(data), dtype=[(n, float) for n in ["x"] + names])
        for i, n in enumerate(rec.dtype.names):
            rec[n] = data[:, i]
        np.save(path.with_suffix(".npy"), rec)
    else:
        np.save(path.with_suffix(".npy"), _smooth(rng, tuple(int(n) for n in rng.integers(3, 12, rng.integers(2, 4)))))


def npz_archive(rng, path: Path) -> None:
    rows = int(rng.integers(4, 20))
    kind = int(rng.integers(0, 3))
    if kind == 0:  # columns of one length, perhaps a number beside them
        data, names = _columns(rng, rows, 2)
        number = {"h": np.float64(0.7)} if rng.integers(0, 2) else {}
        np.savez(path.with_suffix(".npz"), a=data[:, 0], **{n: data[:, i + 1] for i, n in enumerate(names)}, **number)
    elif kind == 1:  # fields beside their time coordinate
        np.savez(path.with_suffix(".npz"), t=np.linspace(0, 1, rows), u=_smooth(rng, (rows, 7)),
                 v=_smooth(rng, (rows, 7)))
    else:  # a field beside a column of another length
        np.savez(path.with_suffix(".npz"), field=_smooth(rng, (rows, 5)), spectrum=_smooth(rng, (rows + 3,)))


HDF5_KINDS = 6


def hdf5_file(rng, path: Path, kind: int | None = None) -> None:
    import h5py

    kind = int(rng.integers(0, HDF5_KINDS)) if kind is None else kind
    rows = int(rng.integers(4, 14))
    with h5py.File(path.with_suffix(".h5"), "w") as f:
        if kind == 0:  # flat columns at the root
            data, names = _columns(rng, rows, 2)
            f["x"] = data[:, 0]
            for i, n in enumerate(names):
                f[n] = data[:, i + 1]
        elif kind == 1:  # nested groups of columns, a number beside them
            data, names = _columns(rng, rows, 2)
            group = f.create_group("run/background")
            group["a"], group[names[0]], group[names[1]] = data[:, 0], data[:, 1], data[:, 2]
            group["omega"] = 0.3
        elif kind == 2:  # fields with dimension scales
            xs = f.create_dataset("coords/x", data=np.linspace(0, 1, rows))
            xs.make_scale("x")
            for name in map(str, rng.choice(NAMES, size=2, replace=False)):
                dset = f.create_dataset(f"state/{name}", data=_smooth(rng, (rows, 6)))
                dset.dims[0].attach_scale(xs)
        elif kind == 3:  # a trajectory: data beside its times (and perhaps an energy series), a grid attribute
            f["times"] = np.linspace(0, rows - 1, rows)
            f["data"] = _smooth(rng, (rows, 24, 24))
            if rng.integers(0, 2):
                f["energy"] = _smooth(rng, (rows,))
            f.attrs["field_attributes"] = json.dumps({"grid": json.dumps(GRID)})
        elif kind == 4:  # preallocated: more rows written than are data
            written = rows + int(rng.integers(1, 6))
            f.create_dataset("times", data=np.concatenate([np.arange(rows, dtype=float), np.zeros(written - rows)]))
            data = np.zeros((written, 5, 4))
            data[:rows] = _smooth(rng, (rows, 5, 4))
            f["data"] = data
            f.attrs["data_length"] = json.dumps(rows) if rng.integers(0, 2) else rows
        else:  # a time coordinate of the wrong length beside the field
            f["time"] = np.arange(rows + 1, dtype=float)
            f["data"] = _smooth(rng, (rows, 6))


def netcdf_file(rng, path: Path) -> None:
    import netCDF4

    dims = {"time": int(rng.integers(3, 9)), "lat": int(rng.integers(3, 9)), "lon": int(rng.integers(3, 9))}
    with netCDF4.Dataset(str(path.with_suffix(".nc")), "w") as f:
        auxiliary = bool(rng.integers(0, 2))  # lon located by a CF auxiliary coordinate, not a coordinate variable
        for name, n in dims.items():
            f.createDimension(name, n if name != "time" or rng.integers(0, 2) else None)
            coordinate = "longitude" if auxiliary and name == "lon" else name
            f.createVariable(coordinate, "f8", (name,))[:] = np.linspace(0, 1, n) + (name == "time")
        temperature = f.createVariable("T", "f8", tuple(dims))
        temperature[:] = _smooth(rng, tuple(dims.values()))
        if auxiliary:
            temperature.coordinates = "longitude"
        if rng.integers(0, 2):
            f.createVariable("ps", "f8", ("lat", "lon"))[:] = _smooth(rng, (dims["lat"], dims["lon"]))


WRITERS = [text_table, csv_table, json_table, npy_array, npz_archive, hdf5_file, netcdf_file]


def reference_set(folder: Path, seed: int, files: int = 9) -> list[Path]:
    """``files`` reference files of layouts drawn with ``seed`` (every writer at least once when files >= 7)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    order = list(WRITERS) + list(rng.choice(WRITERS, size=max(0, files - len(WRITERS))))
    for i, writer in enumerate(order[:files]):
        if i == WRITERS.index(hdf5_file):  # the seeds take every kind of HDF5 file in turn; the rest are drawn
            hdf5_file(rng, folder / f"f{i}_hdf5_file.dat", seed % HDF5_KINDS)
            continue
        writer(rng, folder / f"f{i}_{writer.__name__}.dat")
    return sorted(folder.iterdir())


def write_pde_storage(path: Path, values: np.ndarray, times: np.ndarray, allocated: int | None = None) -> Path:
    """A py-pde FileStorage file: ``data`` and ``times``, attributes as JSON strings; ``allocated`` rows
    preallocated (zeros beyond the data) with ``data_length`` saying how many are data."""
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = len(values)
    total = allocated or rows
    with h5py.File(path, "w") as f:
        data = f.create_dataset("data", shape=(total, *values.shape[1:]), dtype="f8")
        data[:rows] = values
        stamps = f.create_dataset("times", shape=(total,), dtype="f8")
        stamps[:rows] = times
        attributes = {"class": json.dumps("ScalarField"), "grid": json.dumps(GRID), "label": json.dumps("c")}
        f.attrs["field_attributes"] = json.dumps(attributes)
        f.attrs["info"] = json.dumps({"solver": "explicit", "dt": 0.01})
        if allocated:
            f.attrs["data_length"] = json.dumps(rows)
    return path


__all__ = ["GRID", "WRITERS", "reference_set", "write_pde_storage"]
