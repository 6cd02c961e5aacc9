"""Templates shipped with nightshift (templates/ and CLAUDE.md.template), rendered with string.Template.

In a source checkout or an editable install they sit at the repository root beside the packages.

May import: nothing.
"""
from __future__ import annotations

from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent


def template_path(name: str) -> Path:
    path = ROOT / name if name == "CLAUDE.md.template" else ROOT / "templates" / name
    if not path.exists():
        raise FileNotFoundError(f"template {name} missing from {path.parent}; reinstall nightshift")
    return path


def render(name: str, **values: object) -> str:
    """Fill ``$name`` placeholders; unknown ones are left as written."""
    return Template(template_path(name).read_text(encoding="utf-8")).safe_substitute(
        {k: str(v) for k, v in values.items()})
