"""The nightshift.toml reference, rendered from the schema: one markdown table per TOML table (every key, its type,
default and description, read from the pydantic models and their attribute docstrings), so the README's reference
cannot drift from what the loader accepts (tests/test_config_reference.py holds the two equal).

    python -m nightshift.supervisor.config.reference            # the markdown, as it stands between the README's markers
    python -m nightshift.supervisor.config.reference --write    # replace the README's section with it
"""
from __future__ import annotations

import ast
import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from nightshift.supervisor.config.types import parse_duration

BEGIN = "<!-- nightshift.toml reference: begin (generated: python -m nightshift.supervisor.config.reference --write) -->"
END = "<!-- nightshift.toml reference: end -->"
README = Path(__file__).resolve().parents[2] / "README.md"


def _tables() -> list[tuple[str, type[BaseModel], str]]:
    """(the TOML table as written, its model, a line said under its heading), in the order of the reference."""
    from nightshift.supervisor.config.oracle import ColumnOverride, CompareConfig
    from nightshift.supervisor.config.schema import Config

    out: list[tuple[str, type[BaseModel], str]] = []
    for name, field in Config.model_fields.items():
        model = _model_of(field.annotation)
        if model is None:
            continue
        out.append((f"[{name}]", model, ""))
        if name == "oracle":
            out.append(("[[oracle.compare]]", CompareConfig, "one block per comparison (`name`, `candidate` and "
                        "`reference` are required)"))
            out.append(("[oracle.compare.per_column.<column>], [oracle.compare.per_field.<field>]", ColumnOverride,
                        "one column's or field's own tolerances (or inline: `per_column.\"TT\" = { rtol = 1e-4 }`); "
                        "unset keys take the block's"))
    return out


def _model_of(annotation: Any) -> type[BaseModel] | None:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def docs(model: type[BaseModel]) -> dict[str, str]:
    """{key: its docstring} of a model and its bases, read from their source (a string right under the field)."""
    out: dict[str, str] = {}
    for cls in reversed([c for c in model.__mro__ if issubclass(c, BaseModel) and c is not BaseModel]):
        body = ast.parse(inspect.getsource(cls).lstrip()).body[0].body
        for field, doc in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                    and isinstance(doc.value.value, str)):
                out[field.target.id] = inspect.cleandoc(doc.value.value)
    return out


def _is_duration(field: FieldInfo) -> bool:
    return any(getattr(m, "func", None) is parse_duration for m in field.metadata)


def type_name(annotation: Any) -> str:
    """A reader's name for a type: `"a" | "b"`, `list of strings`, `number or string`..."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:  # a bounded number (its bounds are shown beside it)
        return type_name(args[0])
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(named))
    if origin is list:
        if _model_of(args[0]):
            return "array of tables (below)"
        inner = type_name(args[0])
        return f"list of ({inner})" if " " in inner else f"list of {inner}s"
    if origin is tuple:
        return "[" + ", ".join(type_name(a) for a in args) + "]"
    if origin is dict:
        model = _model_of(args[1])
        return "table of tables (below)" if model else f"table of {type_name(args[1])}s"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(annotation, str(annotation))


def _bounds(field: FieldInfo) -> str:
    marks = {annotated_types.Ge: (">=", "ge"), annotated_types.Gt: (">", "gt"), annotated_types.Le: ("<=", "le"),
             annotated_types.Lt: ("<", "lt")}
    out = []
    for meta in field.metadata:
        for kind, (sign, attr) in marks.items():
            if isinstance(meta, kind):
                out.append(f"{sign} {getattr(meta, attr)}")
    return f" ({', '.join(out)})" if out else ""


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f'"{int(seconds // size)}{unit}"'
    return f'"{seconds:g}s"'


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default
    if value is PydanticUndefined or value is None:
        return "none"
    if _is_duration(field):
        return _duration(float(value))
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}" if abs(value) < 1e6 else str(int(value))
    return json.dumps(value)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    """The markdown of the reference (without the markers)."""
    from nightshift.supervisor.config.schema import Config

    lines = ["Top level: `goal` (string, default \"\"): " + _cell(docs(Config).get("goal", "")), ""]
    for table, model, note in _tables():
        lines += [f"**`{table}`**" + (f": {note}" if note else ""), "",
                  "| key | type | default | what it does |", "|---|---|---|---|"]
        described = docs(model)
        for key, field in model.model_fields.items():
            kind = "duration (\"30m\", \"6h\", \"90s\" or seconds)" if _is_duration(field) else \
                type_name(field.annotation)
            lines.append(f"| `{key}` | {_cell(kind + _bounds(field))} | `{default_text(field)}` | "
                         f"{_cell(described.get(key, ''))} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def readme_section(text: str) -> str | None:
    """What stands between the README's markers now (None: no markers)."""
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def write_readme(path: Path = README) -> bool:
    """Put the rendering between the markers; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    if readme_section(text) is None:
        raise SystemExit(f"{path}: no {BEGIN!r} ... {END!r} markers; add them where the reference goes")
    head, rest = text.split(BEGIN, 1)
    new = f"{head}{BEGIN}\n{render()}{END}{rest.split(END, 1)[1]}"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        print(f"{README}: {'updated' if write_readme() else 'already current'}")
    else:
        sys.stdout.write(render())
