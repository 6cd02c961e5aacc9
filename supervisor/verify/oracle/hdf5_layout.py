"""layout.py's rules on an open HDF5 file (h5py objects): a dataset's rows that are data, a field's axes (dimension
scales, a sibling coordinate, a grid attribute) and the members a group's table is made of. Only attributes and
1-D coordinate candidates are read; a field's values are never loaded here.
"""
from __future__ import annotations

import numpy as np

from supervisor.verify.oracle.layout import (LENGTH_ATTRIBUTE, Axes, axis_word, dim_names, length_value, misfit_coordinates,
                                             sibling_coordinate, stated_grid, table_members)

def is_scale(dataset) -> bool:
    """An HDF5 dimension scale: a field's coordinate, not a data set of its own."""
    return dataset.attrs.get("CLASS") in (b"DIMENSION_SCALE", "DIMENSION_SCALE")


def _is_dataset(node) -> bool:
    return hasattr(node, "dtype") and hasattr(node, "shape")


def _is_field(node) -> bool:
    return _is_dataset(node) and node.ndim >= 2 and not node.dtype.names


def _attr(node, name: str):
    try:
        return node.attrs.get(name)
    except (OSError, TypeError, ValueError):  # an attribute of a type h5py cannot read is no statement
        return None


def stated_rows(dataset) -> tuple[int | None, list[str]]:
    """(the rows of ``dataset`` that are data, None: all of them; notes on a stated length that is no length)."""
    if not dataset.shape:
        return None, []
    rows = dataset.shape[0]
    own = length_value(_attr(dataset, LENGTH_ATTRIBUTE))
    node, stated = dataset, own
    if own is None:  # a group states it for its preallocated datasets
        parent = dataset.parent
        stated = length_value(_attr(parent, LENGTH_ATTRIBUTE))
        if stated is None or rows != _preallocated(parent):
            return None, []
        node = parent
    if isinstance(stated, str):
        return None, [f"{_label(node)}: {stated}"]
    if not 0 < stated <= rows:
        return None, [f"{_label(node)}: {LENGTH_ATTRIBUTE} = {stated} is not between 1 and the {rows} rows written: "
                      "every row is compared"]
    return stated, []


def _label(node) -> str:
    return node.name if node.name != "/" else "the file"


def _preallocated(group) -> int | None:
    """The rows a group preallocates: the longest first axis of its fields (of its datasets when it has none)."""
    sets = [v for v in group.values() if _is_dataset(v) and v.shape]
    fields = [v for v in sets if _is_field(v)]
    return max((v.shape[0] for v in (fields or sets)), default=None)


def data_rows(dataset) -> int:
    rows, _ = stated_rows(dataset)
    return dataset.shape[0] if rows is None else rows


def group_shapes(group) -> dict[str, tuple[int, ...]]:
    """The datasets directly in ``group`` (dimension scales left out) and their shapes, rows that are data only."""
    out = {}
    for key, value in group.items():
        if _is_dataset(value) and not is_scale(value):
            out[key] = (data_rows(value), *value.shape[1:]) if value.shape else ()
    return out


def _values(group):
    return lambda key: np.asarray(group[key][:data_rows(group[key])])


def coordinates_of(group) -> dict[str, str]:
    """{field member: its first axis's coordinate member} among the datasets directly in ``group``."""
    shapes = group_shapes(group)
    found = {}
    for key, shape in shapes.items():
        if len(shape) >= 2 and not group[key].dtype.names and not _has_scale(group[key], 0):
            coordinate = sibling_coordinate(shapes, key, _values(group))
            if coordinate is not None:
                found[key] = coordinate
    return found


def _has_scale(dataset, axis: int) -> bool:
    try:
        return len(dataset.dims[axis]) > 0
    except (TypeError, ValueError, IndexError):
        return False


def table_of(group) -> list[str]:
    """The members a table read of ``group`` takes (peek and the reader alike): its 1-D and 0-d datasets but a
    field's coordinate (see layout.table_members)."""
    columns = {k: s for k, s in group_shapes(group).items() if len(s) <= 1}
    return table_members(columns, set(coordinates_of(group).values()))


def field_axes(dataset) -> Axes:
    """Names, coordinates and notes of every axis of a field dataset (its rows that are data)."""
    rows, notes = stated_rows(dataset)
    shape = ((rows if rows is not None else dataset.shape[0]), *dataset.shape[1:])
    if rows is not None:
        notes.append(f"the first {rows} of its {dataset.shape[0]} rows are data ({LENGTH_ATTRIBUTE} = {rows})")
    dims: list[str | None] = [None] * len(shape)
    coords: list[np.ndarray | None] = [None] * len(shape)
    sources: list[str | None] = [None] * len(shape)
    for axis, dim in enumerate(dataset.dims):
        dims[axis] = dim.label or None
        if len(dim):  # an attached dimension scale: the axis's coordinate
            scale = dim[0]
            dims[axis] = dims[axis] or scale.attrs.get("NAME", b"").decode("utf-8", "replace").split("\0")[0] or \
                scale.name.rsplit("/", 1)[-1]
            length = data_rows(scale) if scale.shape else 0
            if scale.ndim == 1 and length == shape[axis]:
                coords[axis], sources[axis] = np.asarray(scale[:length], dtype=float), scale.name
            else:
                notes.append(f"the dimension scale {scale.name} holds {length} values but axis {axis} of "
                             f"{dataset.name} has {shape[axis]}: not used as its coordinate")
    group = dataset.parent
    key = dataset.name.rsplit("/", 1)[-1]
    if coords[0] is None:
        coordinate = coordinates_of(group).get(key)
        if coordinate is not None:
            values = np.asarray(group[coordinate][:shape[0]], dtype=float)
            coords[0], sources[0] = values, group[coordinate].name
            dims[0] = dims[0] or _time_word(coordinate)
        else:
            notes += misfit_coordinates(group_shapes(group), [key], group.name.rstrip("/") + "/")
    grid = stated_grid(_attribute_texts(dataset), tuple(shape[1:]))
    if isinstance(grid, str):
        notes.append(grid)
    elif grid is not None:
        names, centres = grid
        first = len(shape) - len(centres)
        for offset, (name, values) in enumerate(zip(names, centres)):
            axis = first + offset
            if coords[axis] is None:
                coords[axis], sources[axis] = values, "its grid attribute"
                dims[axis] = dims[axis] or name
    fallback = dim_names(len(shape))
    return Axes([d or fallback[i] for i, d in enumerate(dims)], coords, notes, sources)


def _time_word(name: str) -> str:
    return axis_word(name) or name


def _attribute_texts(dataset) -> list[object]:
    """The string attributes of the dataset and of every group above it, nearest first."""
    texts, node = [], dataset
    while True:
        try:
            texts += [v for v in node.attrs.values() if isinstance(v, (str, bytes))]
        except (OSError, TypeError, ValueError):
            pass
        if node.name == "/":
            return texts
        node = node.parent


__all__ = ["coordinates_of", "data_rows", "field_axes", "group_shapes", "is_scale", "stated_rows",
           "table_of"]
