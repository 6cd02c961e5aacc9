"""What `nightshift init --reference-dir` found in the references, as records: one Comparison a data set, and the
Survey of them all with the goal's tolerances. Filled by references.py, given their derived absolute floors by
derived_atol.py, written as the [oracle] section by references.py: a leaf both import, so neither imports the other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nightshift.supervisor.cli.init.goal_words import Tolerance


@dataclass
class Comparison:
    name: str
    reference: str
    candidate: str
    x: str | int | None
    columns: list[str | int]
    rows_seen: int
    notes: list[str] = field(default_factory=list)
    heldout: bool = False  # --holdout: the reference moved to nightshift's private store (cli/init_holdout.py)
    fields: list[str] = field(default_factory=list)  # N-d fields of the file, each compared over all its elements
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # the fields' shapes, for the comment
    derived: list = field(default_factory=list)  # derived_atol.Derived: atol from the reference's precision
    sample: object = None  # a table's first rows as the survey read them (peek.py): what a big table's scale starts from


@dataclass
class Survey:
    comparisons: list[Comparison]
    skipped: list[tuple[str, str]]  # (file relative to the workspace, why it is not compared)
    tolerance: Tolerance
    own: dict[str, Tolerance] = field(default_factory=dict)  # a field's own, where the goal names it (short_name)
