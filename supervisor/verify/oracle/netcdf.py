"""NetCDF files (classic NetCDF-3 and NetCDF-4) through the netCDF4 library, the optional ``nightshift[netcdf]``
extra: a data variable is a field whose coordinates are its dimensions' coordinate variables (a 1-D variable
named as its dimension, the CF convention); the same file read as a table gives the 1-D variables of one
dimension as named columns, its coordinate among them (so ``x = "x"`` works).
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from nightshift.supervisor.verify.oracle.table import OracleInputError, Table, table_from_array


def netcdf_module(path: Path, side: str = "both"):
    try:
        import netCDF4
    except ImportError:
        raise OracleInputError(f"{path}: reading NetCDF needs the netCDF4 library; pip install netCDF4 (or the "
                               "nightshift[netcdf] extra)", side, "netCDF4 missing") from None
    return netCDF4


def _open(path: Path, side: str):
    netCDF4 = netcdf_module(path, side)
    try:
        handle = netCDF4.Dataset(os.fspath(path), "r")  # fspath: a pinned candidate reads its opened file
    except OSError as exc:
        raise OracleInputError(f"{path}: cannot be read as NetCDF ({exc.strerror or exc})", side,
                               "unreadable file") from None
    handle.set_auto_mask(False)  # a fill value is a value to compare, not a hole that hides a difference
    return handle


def coordinate_names(handle) -> set[str]:
    return {name for name, var in handle.variables.items() if var.dimensions == (name,)}


def data_variables(handle) -> list[str]:
    """The variables to compare: numeric and not a coordinate (a coordinate variable, or an auxiliary one a CF
    ``coordinates`` attribute names), in the file's order."""
    coords = coordinate_names(handle) | {name for var in handle.variables.values() if "coordinates" in var.ncattrs()
                                         for name in str(var.getncattr("coordinates")).split()}
    return [name for name, var in handle.variables.items()
            if name not in coords and var.dimensions and np.dtype(var.dtype).kind in "fiuc"]


def open_variable(path: Path, part: str | None, stack: contextlib.ExitStack, side: str) -> dict:
    """What field.Field is made of: where, source, shape, dtype, dims and coords of one variable."""
    handle = _open(path, side)
    stack.callback(handle.close)
    if part is None:
        names = data_variables(handle)
        if len(names) != 1:
            raise OracleInputError(f"{path}: holds the variables {names}; name one as '{path}:<variable>' (or list "
                                   "them in fields = [...])", side, "ambiguous container")
        part = names[0]
    var = handle.variables.get(part.lstrip("/"))
    if var is None:
        raise OracleInputError(f"{path}: no variable {part!r}; it has {data_variables(handle)}", side,
                               "unknown part")
    dims, coords, _ = axis_coordinates(handle, var)
    packed = {"scale_factor", "add_offset"} & set(var.ncattrs())  # CF packing: integers read back as floats
    dtype = np.dtype("f8") if packed else np.dtype(var.dtype)
    return dict(where=f"{path}:{var.name}", source=var, shape=tuple(var.shape), dtype=dtype, dims=dims, coords=coords)


def axis_coordinates(handle, var) -> tuple[list[str], list[np.ndarray | None], list[str | None]]:
    """(names, coordinates, where each came from) of a variable's axes: its dimension's coordinate variable (a 1-D
    variable named as its dimension), else a 1-D variable of that dimension its CF ``coordinates`` attribute names
    (an auxiliary coordinate: the axis is then named as it is)."""
    named = str(var.getncattr("coordinates")).split() if "coordinates" in var.ncattrs() else []
    dims, coords, sources = [], [], []
    for dim, size in zip(var.dimensions, var.shape):
        found, name = None, dim
        for candidate in [dim] + named:
            coord = handle.variables.get(candidate)
            if coord is not None and coord.dimensions == (dim,) and coord.shape == (size,) and \
                    np.dtype(coord.dtype).kind in "fiu":
                found, name = coord, candidate
                break
        dims.append(name)
        coords.append(np.asarray(found[:], dtype=float) if found is not None else None)
        sources.append(None if found is None else "its coordinate variables" if name == dim else
                       "its CF coordinates attribute")
    return dims, coords, sources


def read_netcdf_table(path: Path, part: str | None) -> Table:
    """A variable (1-D or 2-D) as a table, or without a part the 1-D variables of the file's one dimension."""
    with contextlib.closing(_open(path, "both")) as handle:
        if part is not None:
            var = handle.variables.get(part.lstrip("/"))
            if var is None:
                raise OracleInputError(f"{path}: no variable {part!r}; it has {list(handle.variables)}",
                                       kind="unknown part")
            return table_from_array(f"{path}:{var.name}", np.asarray(var[:]))
        ones = {name: var for name, var in handle.variables.items() if len(var.dimensions) == 1}
        dims = {var.dimensions for var in ones.values()}
        if len(dims) != 1 or len(ones) != len(handle.variables):
            raise OracleInputError(f"{path}: holds {list(handle.variables)}; name one as '{path}:<variable>' (or "
                                   "list them in fields = [...])", kind="ambiguous container")
        names = list(ones)
        return Table(str(path), names, [np.asarray(ones[n][:], dtype=float) for n in names])
