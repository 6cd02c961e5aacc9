"""A grid a file states in a JSON attribute, as cell centres of a field's last axes: py-pde's grids (CartesianGrid
``{"bounds": [[0, 24], [0, 24]], "shape": [24, 24]}``, UnitGrid ``{"shape": [...]}`` on [0, n], the radial grids'
``radius`` and CylindricalSymGrid's ``bounds_z``), and any dict of that form. Read with json.loads only (strings
holding JSON are followed a few levels deep, as py-pde nests them): nothing a file says is executed.
"""
from __future__ import annotations

import json

import numpy as np

JSON_LIMIT = 1 << 20  # an attribute longer than this is not parsed (a grid's description is a few hundred bytes)
JSON_DEPTH = 4  # py-pde nests JSON strings in JSON strings three deep


def cell_centres(lo: float, hi: float, count: int) -> np.ndarray:
    return lo + (np.arange(count) + 0.5) * ((hi - lo) / count)


def stated_grid(texts: list[object], trailing: tuple[int, ...]) -> tuple[list[str], list[np.ndarray]] | str | None:
    """(axis names, cell centres) of the last axes from the first grid a JSON attribute states whose shape is the
    field's last axes; a note when a grid is stated with another shape; None when none is."""
    misfit = None
    for text in texts:
        for names, bounds, shape in _grids(text, JSON_DEPTH):
            k = len(shape)
            if k > len(trailing) or tuple(shape) != tuple(trailing[len(trailing) - k:]):
                misfit = misfit or (f"a grid attribute states shape {list(shape)}, not the field's last axes "
                                    f"{list(trailing)}: not used")
                continue
            return names, [cell_centres(lo, hi, n) for (lo, hi), n in zip(bounds, shape)]
    return misfit


def _grids(value: object, depth: int):
    """(names, bounds, shape) of every grid in a JSON value."""
    if depth < 0:
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith(("{", "[", '"')) or len(text) > JSON_LIMIT:
            return
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # "[[[[...": a file's nesting is no reason to fail
            return
        yield from _grids(value, depth - 1)
        return
    if isinstance(value, dict):
        found = _grid(value)
        if found is not None:
            yield found
            return
        for item in value.values():
            yield from _grids(item, depth)
    elif isinstance(value, list):
        for item in value[:16]:
            yield from _grids(item, depth)


def _grid(value: dict) -> tuple[list[str], list[tuple[float, float]], list[int]] | None:
    shape = value.get("shape")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, list) or not shape or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0
                                                           for n in shape):
        return None
    kind = str(value.get("class", "")).lower()
    if "bounds" in value:
        bounds = value["bounds"]
    elif "radius" in value:  # PolarSymGrid, SphericalSymGrid, CylindricalSymGrid (r, then z)
        radius = value["radius"]
        bounds = [[0, radius] if _number(radius) else radius] + ([value.get("bounds_z")] if len(shape) == 2 else [])
    elif "unitgrid" in kind:
        bounds = [[0, n] for n in shape]
    else:
        return None
    if not isinstance(bounds, list) or len(bounds) != len(shape) or not all(
            isinstance(b, list) and len(b) == 2 and all(_number(v) for v in b) and b[0] != b[1] for b in bounds):
        return None
    return _axis_names(value, kind, len(shape)), [(float(lo), float(hi)) for lo, hi in bounds], shape


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value))


def _axis_names(grid: dict, kind: str, count: int) -> list[str]:
    axes = grid.get("axes")
    if isinstance(axes, list) and len(axes) == count and all(isinstance(a, str) and a for a in axes):
        return [a[:16] for a in axes]
    if "radius" in grid:
        return ["r", "z"][:count]
    return (["x", "y", "z"] if count <= 3 else [f"x{i}" for i in range(count)])[:count]


__all__ = ["cell_centres", "stated_grid"]
