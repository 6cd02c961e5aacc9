"""layout.py's rules on an open HDF5 file (h5py objects): a dataset's rows that are data, a field's axes (dimension
scales, a sibling coordinate, a grid attribute) and the members a group's table is made of. Only attributes and
1-D coordinate candidates are read; a field's values are never loaded here.
"""
from __future__ import annotations

import numpy as np

from nightshift.supervisor.verify.oracle.grid_attribute import stated_grid
from nightshift.supervisor.verify.oracle.layout import (LENGTH_ATTRIBUTE, Axes, axis_word, dim_names, length_value,
                                             misfit_coordinates, sibling_coordinate, table_members)

ATTRIBUTES = 64  # the attributes of one node looked at for a grid


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


class GroupLayout:
    """One group's datasets as layout.py reads them, each attribute looked at once: the rows of each that are data,
    their shapes (dimension scales left out), the fields' sibling coordinates and the members of its table."""

    def __init__(self, group):
        self.group = group
        members = {k: v for k, v in hard_members(group) if _is_dataset(v)}
        self.datasets = {k: v for k, v in members.items() if not is_scale(v)}
        self.stated = length_value(_attr(group, LENGTH_ATTRIBUTE))
        sets = [v for v in members.values() if v.shape]
        fields = [v for v in sets if _is_field(v)]
        preallocated = max((v.shape[0] for v in (fields or sets)), default=None)  # the longest first axis
        self.rows = {k: self._stated(v, preallocated) for k, v in members.items()}
        self._written = {k: v.shape[0] for k, v in members.items() if v.shape}
        self.shapes = {k: (self.data_rows(k), *v.shape[1:]) if v.shape else () for k, v in self.datasets.items()}
        self._coordinates: dict[str, str] | None = None

    def _stated(self, dataset, preallocated: int | None) -> tuple[int | None, list[str]]:
        """(the rows that are data, None: all; notes on a stated length that is no length): the dataset's own
        data_length, else its group's for the datasets of the group's preallocated length."""
        if not dataset.shape:
            return None, []
        rows = dataset.shape[0]
        stated, node = length_value(_attr(dataset, LENGTH_ATTRIBUTE)), dataset
        if stated is None:
            if self.stated is None or rows != preallocated:
                return None, []
            stated, node = self.stated, self.group
        if isinstance(stated, str):
            return None, [f"{_label(node)}: {stated}"]
        if not 0 < stated <= rows:
            return None, [f"{_label(node)}: {LENGTH_ATTRIBUTE} = {stated} is not between 1 and the {rows} rows "
                          "written: every row is compared"]
        return stated, []

    def data_rows(self, key: str) -> int:
        rows = self.rows[key][0]
        return self._written[key] if rows is None else rows

    def values(self, key: str) -> np.ndarray:
        """A 1-D member's values that are data (a coordinate candidate: small beside the fields)."""
        return np.asarray(self.group[key][:self.data_rows(key)])

    def coordinates(self) -> dict[str, str]:
        """{field member: its first axis's coordinate member} among the group's datasets."""
        if self._coordinates is None:
            self._coordinates = {}
            for key, shape in self.shapes.items():
                if len(shape) >= 2 and not self.datasets[key].dtype.names and not _has_scale(self.datasets[key], 0):
                    coordinate = sibling_coordinate(self.shapes, key, self.values)
                    if coordinate is not None:
                        self._coordinates[key] = coordinate
        return self._coordinates

    def table(self) -> list[str]:
        """The members a table read of the group takes (peek and the reader alike): its 1-D datasets but a field's
        coordinate (see layout.table_members)."""
        columns = {k: s for k, s in self.shapes.items() if len(s) == 1}
        return table_members(columns, set(self.coordinates().values()))


def hard_members(group):
    """(name, node) of the group's own members: a soft or external link is not followed (an external one would open
    another file the candidate names), so it is no part of the layout."""
    import h5py

    for key in group:
        try:
            if group.id.links.get_info(key.encode("utf-8")).type == h5py.h5l.TYPE_HARD:
                yield key, group[key]
        except (KeyError, OSError, TypeError, ValueError):  # a member h5py cannot open is no part either
            continue


def hard_node(handle, part: str | None):
    """The node at ``part`` (None: the root group) reached through hard links only: a soft or external link on the
    way would open what the file names (a reference's dataset, by an ExternalLink), so it is refused. KeyError:
    no such member; LinkRefused: a link, or a dataset whose values are stored in other files."""
    import h5py

    node = handle
    for name in [p for p in (part or "").split("/") if p]:
        if not isinstance(node, h5py.Group):
            raise KeyError(name)
        try:
            info = node.id.links.get_info(name.encode("utf-8"))
        except (KeyError, RuntimeError):  # h5py says "name doesn't exist" either way
            raise KeyError(name) from None
        if info.type != h5py.h5l.TYPE_HARD:
            kind = "an external link" if info.type == h5py.h5l.TYPE_EXTERNAL else "a soft link"
            raise LinkRefused(f"{name} is {kind}: not followed; write the data itself into the file")
        node = node[name]
    refuse_outside_storage(node)
    return node


def refuse_outside_storage(node) -> None:
    """LinkRefused for a dataset whose values live in other files (virtual, or external raw storage)."""
    if _is_dataset(node) and (getattr(node, "is_virtual", False) or getattr(node, "external", None)):
        raise LinkRefused(f"{node.name} keeps its values in other files (a virtual or external dataset): not read; "
                          "write the values into the file itself")


class LinkRefused(ValueError):
    """A part of an HDF5 file nightshift will not read: reached through a link, or stored in other files."""


def _label(node) -> str:
    return node.name if node.name != "/" else "the file"


def _key(dataset) -> str:
    return dataset.name.rsplit("/", 1)[-1]


def stated_rows(dataset, layout: GroupLayout | None = None) -> tuple[int | None, list[str]]:
    return (layout or GroupLayout(dataset.parent)).rows[_key(dataset)]


def data_rows(dataset, layout: GroupLayout | None = None) -> int:
    return (layout or GroupLayout(dataset.parent)).data_rows(_key(dataset))


def _has_scale(dataset, axis: int) -> bool:
    try:
        return len(dataset.dims[axis]) > 0
    except (TypeError, ValueError, IndexError):
        return False


def field_axes(dataset, layout: GroupLayout | None = None) -> Axes:
    """Names, coordinates and notes of every axis of a field dataset (its rows that are data); ``layout``: its
    group's, when the caller has it."""
    layout = layout or GroupLayout(dataset.parent)
    rows, notes = layout.rows[_key(dataset)]
    notes = list(notes)
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
            here = layout if scale.parent == layout.group and _key(scale) in layout.rows else None  # read once
            length = data_rows(scale, here) if scale.shape else 0  # a scale of another group: its group's length
            if scale.ndim == 1 and length == shape[axis]:
                coords[axis], sources[axis] = np.asarray(scale[:length], dtype=float), scale.name
            else:
                notes.append(f"the dimension scale {scale.name} holds {length} values but axis {axis} of "
                             f"{dataset.name} has {shape[axis]}: not used as its coordinate")
    group, key = layout.group, _key(dataset)
    if coords[0] is None:
        coordinate = layout.coordinates().get(key)
        if coordinate is not None:
            values = np.asarray(group[coordinate][:shape[0]], dtype=float)
            coords[0], sources[0] = values, group[coordinate].name
            dims[0] = dims[0] or _time_word(coordinate)
        else:
            notes += misfit_coordinates(layout.shapes, key, layout.values, group.name.rstrip("/") + "/")
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
    """The string attributes of the dataset and of every group above it, nearest first (at most ``ATTRIBUTES`` of
    each: a grid is among a handful; an attribute h5py cannot read is left out)."""
    texts, node = [], dataset
    while True:
        try:
            names = list(node.attrs)[:ATTRIBUTES]
        except (OSError, TypeError, ValueError):
            names = []
        for name in names:
            value = _attr(node, name)
            if isinstance(value, (str, bytes)):
                texts.append(value)
        if node.name == "/":
            return texts
        node = node.parent


__all__ = ["GroupLayout", "LinkRefused", "data_rows", "field_axes", "hard_members", "hard_node", "is_scale",
           "refuse_outside_storage", "stated_rows"]
