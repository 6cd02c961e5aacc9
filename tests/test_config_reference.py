"""The README's nightshift.toml reference is the schema's: the section between its markers equals the rendering of
the pydantic models (supervisor/config/reference.py), every key the loader accepts is in it with a description, and
each default it states, written into a nightshift.toml, loads as the schema's own default."""
from __future__ import annotations

from pathlib import Path

import pytest

from nightshift.supervisor.config import reference
from nightshift.supervisor.config.schema import Config, parse_config

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_reference_is_the_rendering_of_the_schema():
    published = reference.readme_section(README.read_text(encoding="utf-8"))
    assert published is not None, f"README.md lacks the markers {reference.BEGIN!r} ... {reference.END!r}"
    assert published == reference.render(), (
        "README.md's nightshift.toml reference differs from the schema; regenerate it with "
        "`.venv/bin/python -m nightshift.supervisor.config.reference --write` (and describe a new key with a docstring under it)")


def test_every_key_the_loader_accepts_is_described_in_its_table():
    text = reference.render()
    for table, model, _ in reference._tables():
        section = text.split(f"**`{table}`**", 1)[1].split("\n**`", 1)[0]
        described = reference.docs(model)
        for key in model.model_fields:
            assert f"| `{key}` |" in section, f"{table} {key} is missing from the reference"
            assert described.get(key, "").strip(), f"{table} {key} has no description (a docstring under it)"
    assert reference.docs(Config).get("goal", "").strip()
    assert "typing." not in text and "Annotated" not in text, "a type rendered as Python's repr, not a reader's name"
    # the keys issue 40 found in no table of the old README
    for table, key in (("[agent]", "model"), ("[agent]", "turn_timeout"), ("[judge]", "enabled"),
                       ("[judge]", "criteria"), ("[judge]", "max_cost_usd"), ("[slurm]", "extra"),
                       ("[oracle]", "embedded_run"), ("[oracle]", "heldout_budget")):
        assert f"| `{key}` |" in text.split(f"**`{table}`**", 1)[1].split("\n**`", 1)[0], (table, key)


def test_embedded_run_and_heldout_budget_are_oracle_keys_not_a_comparisons():
    compare = reference.render().split("**`[[oracle.compare]]`**", 1)[1].split("\n**`", 1)[0]
    assert "| `embedded_run` |" not in compare and "| `heldout_budget` |" not in compare
    base = '[[oracle.compare]]\nname = "a"\ncandidate = "c"\nreference = "r"\n'
    with pytest.raises(Exception, match="unknown key oracle.compare.0..embedded_run"):
        parse_config(base + "embedded_run = 5\n")
    assert parse_config('[oracle]\nembedded_run = 5\nheldout_budget = 8\n').oracle.embedded_run == 5


@pytest.mark.parametrize("table, model", [(t, m) for t, m, _ in reference._tables() if not t.startswith("[oracle.")])
def test_each_stated_default_loads_as_the_schemas_default(table, model):
    written, expected = [], {}
    for key, field in model.model_fields.items():
        shown = reference.default_text(field)
        if shown in ("none", "required") or key == "compare":
            continue
        written.append(f"{key} = {shown}")
        expected[key] = model.model_fields[key].get_default(call_default_factory=True)
    if table == "[[oracle.compare]]":
        text = '[[oracle.compare]]\nname = "a"\ncandidate = "c"\nreference = "r"\n' + "\n".join(
            w for w in written if not w.startswith(("name ", "candidate ", "reference "))) + "\n"
        loaded = parse_config(text).oracle.compare[0]
    else:
        name = table.strip("[]")
        loaded = getattr(parse_config(f"[{name}]\n" + "\n".join(written) + "\n"), name)
    for key, value in expected.items():
        shown = reference.default_text(model.model_fields[key])
        assert getattr(loaded, key) == value, f"{table} {key}: the reference says {shown}"
