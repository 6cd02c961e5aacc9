"""The [oracle] section of nightshift.toml: the command that makes candidate outputs and the comparisons.

A comparison reads a candidate file (made by the command) and a reference file, picks the x column and the
compared columns (by name or 0-based index), and checks |candidate - reference| against rtol and atol
(per comparison, overridable per column in ``[oracle.compare.per_column.<column>]``).
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from nightshift.supervisor.config.oracle_rules import OracleChoices, split_part
from nightshift.supervisor.config.scale import check_scale
from nightshift.supervisor.config.types import Duration, Section

# How rtol and atol combine at a point (d = |candidate - reference|, s = |scale|):
#   sum    d <= atol + rtol*s            (numpy.isclose; the default)
#   either d <= atol  or  d <= rtol*s    (numdiff's default)
#   both   d <= atol  and d <= rtol*s    (numdiff --strict)
ToleranceMode = Literal["sum", "either", "both"]
# What the relative error is relative to: "reference" (|reference| at each point), "max" (the largest
# |reference| of the column), a number, or an expression of reference columns such as "sqrt(TT*EE)" for a
# quantity that crosses zero.
Scale = float | str


def _valid_scale(value: Scale | None) -> Scale | None:
    if value is not None:
        check_scale(value)
    return value


class ColumnOverride(Section):
    rtol: float | None = Field(None, ge=0)
    """This column's or field's relative tolerance."""
    atol: float | None = Field(None, ge=0)
    """This column's or field's absolute tolerance."""
    scale: Scale | None = None
    """What this column's relative error is relative to (as the block's scale)."""

    @field_validator("scale")
    @classmethod
    def _scale_ok(cls, value: Scale | None) -> Scale | None:
        return _valid_scale(value)


class CompareConfig(Section):
    name: str
    """The comparison's name in verdicts, push-backs and the report."""
    candidate: str
    """The candidate file the oracle command writes, relative to the workspace; "file.npz:key", "file.h5:/group/data",
    "file.nc:var", "file.json:a.b" pick a part."""
    reference: str
    """The reference file, relative to the workspace (or, held out, a path in nightshift's private store); hashed at
    init, a change is undone."""
    x: str | int | None = None
    """The x column, by name ("1:l" headers, CSV headers) or 0-based index; none: compare row by row."""
    columns: list[str | int] = Field(default_factory=list)
    """The compared columns by name or 0-based index; empty: every column but x."""
    rtol: float = Field(1e-3, ge=0)
    """Relative tolerance."""
    atol: float = Field(0.0, ge=0)
    """Absolute tolerance."""
    tolerance: ToleranceMode = "sum"
    """How rtol and atol combine at a point: "sum" |d| <= atol + rtol*s (numpy.isclose), "either" (numdiff's default),
    "both" (numdiff --strict)."""
    scale: Scale = "reference"
    """What the relative error is relative to: "reference" (each point), "max" (the column's largest |reference|), a
    number, or an expression of reference columns such as "sqrt(TT*EE)"."""
    per_column: dict[str, ColumnOverride] = Field(default_factory=dict)
    """Tolerances of one column: per_column.<column> = { rtol, atol, scale }."""
    # Several fields of one file in one block: each is its own comparison "<name>:<field>" over every element of
    # "<candidate>:<field>" against "<reference>:<field>" (the list is expanded when the config is read).
    fields: list[str] = Field(default_factory=list)
    """Parts of one file (HDF5 datasets, NetCDF variables, .npz members), each compared as "<name>:<field>" over all
    its elements, located by index and coordinates; excludes x and columns."""
    per_field: dict[str, ColumnOverride] = Field(default_factory=dict)
    """Tolerances of one field: per_field."<field>" = { rtol, atol, scale }."""
    range: tuple[float, float] | None = None
    """[low, high]: compare only where x lies in this range."""
    interpolate: Literal["none", "linear", "loglog"] = "none"
    """When the candidate's x grid differs from the reference's: "linear" or "loglog" interpolation of the candidate."""
    heldout: bool = False
    """The reference is kept outside the workspace; the agent learns only pass or a coarse band, at a claim of done."""
    fast: bool = False
    """Part of the fast oracle run at every stop (fast_command)."""
    # Deprecated, does nothing: an exact match computed with the references out of reach passes (copies are found
    # by what they leave within the solver's reach: verify/oracle/kept.py). Accepted so old files still load;
    # ``deprecation_notes`` says to delete it.
    allow_exact: bool = False
    """Deprecated, does nothing: an exact match computed with the references out of reach passes (`check` says to
    delete it)."""

    @field_validator("scale")
    @classmethod
    def _scale_ok(cls, value: Scale) -> Scale:
        return _valid_scale(value)

    @field_validator("range")
    @classmethod
    def _ordered(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and value[0] > value[1]:
            raise ValueError(f"must be [low, high] with low <= high, got {list(value)}")
        return value

    @model_validator(mode="after")
    def _fields_are_parts(self) -> "CompareConfig":
        if not self.fields:
            if self.per_field:
                raise ValueError("per_field needs fields = [...] (the fields it sets tolerances for)")
            return self
        dupes = sorted({f for f in self.fields if self.fields.count(f) > 1})
        if dupes:
            raise ValueError(f"fields lists {dupes} twice; list each field once")
        if self.columns or self.x is not None:
            raise ValueError("fields and columns (or x) exclude each other: a field is compared over all its "
                             "elements; put a table in a block of its own")
        for spec in (self.candidate, self.reference):
            if split_part(spec)[1] is not None:
                raise ValueError(f"with fields = [...], {spec!r} names the file only (drop ':{split_part(spec)[1]}')")
        unknown = sorted(k for k in self.per_field if k not in self.fields)
        if unknown:
            raise ValueError(f"per_field names {unknown}, which are not in fields {self.fields}")
        return self

    def expanded(self) -> list["CompareConfig"]:
        """One comparison per field (itself when it lists none)."""
        if not self.fields:
            return [self]
        out = []
        base = self.model_dump(exclude={"fields", "per_field", "name", "candidate", "reference"})
        for part in self.fields:
            over = self.per_field.get(part)
            tol = {k: v for k, v in (over.model_dump() if over else {}).items() if v is not None}
            out.append(CompareConfig(**{**base, **tol}, name=f"{self.name}:{part.strip('/')}",
                                     candidate=f"{self.candidate}:{part}", reference=f"{self.reference}:{part}"))
        return out

    @field_validator("columns")
    @classmethod
    def _columns_once(cls, value: list[str | int]) -> list[str | int]:
        keys = [str(c) for c in value]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"columns lists {dupes} more than once; each compared column must be a different "
                             "column of the file (name a repeated header by its 0-based position)")
        return value

    @model_validator(mode="after")
    def _overrides_name_columns(self) -> "CompareConfig":
        named = {str(c) for c in self.columns}
        unknown = [k for k in self.per_column if self.columns and k not in named]
        if unknown:
            raise ValueError(f"per_column names {unknown} that are not in columns {list(self.columns)}")
        return self


class OracleConfig(Section, OracleChoices):
    command: str = ""
    """The command that writes the candidate outputs, run in the workspace inside the namespace with every reference
    absent."""
    timeout: Duration = 1800.0
    """The longest the oracle command may run."""
    fast_command: str = ""
    """The cheaper command of the fast oracle (default: command)."""
    clean_candidates: bool = True
    """Remove the candidate files before the command runs, so no stale output passes."""
    compare: list[CompareConfig] = Field(default_factory=list)
    """The comparisons, one [[oracle.compare]] block each."""
    # A file of the workspace (outside the references) that holds this many of a reference's values in a row, at
    # full printed precision, is a finding: the answers were pasted into the code. 0 turns the scan off.
    embedded_run: int = Field(20, ge=0)
    """A workspace file holding this many of a reference's values in a row, at full printed precision (at least 6
    significant digits), is a finding (answers pasted into code); 0 turns the scan off."""
    # The most a run may tell the agent about its held-out comparisons, in bits (verify/oracle/exam.py): each claim
    # of done costs log2 of the answers it could give; past the budget a claim is answered with nothing.
    heldout_budget: float = 32.0
    """The most a run may tell the agent about its held-out comparisons, in bits: each claim of done costs log2 of the
    answers it could give; past it a failing claim pauses the run for you."""

    @field_validator("heldout_budget")
    @classmethod
    def _budget_positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError("must be more than 0 bits (it caps what the agent may learn about held-out "
                             "comparisons; with 0 it could never learn that one passes); leave it out for the "
                             "default 32")
        return value

    @field_validator("compare")
    @classmethod
    def _unique_names(cls, value: list[CompareConfig]) -> list[CompareConfig]:
        value = [one for comp in value for one in comp.expanded()]
        names = [c.name for c in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"comparison names must be unique; repeated: {dupes}")
        return value


def deprecation_notes(oracle: OracleConfig | None) -> list[str]:
    """One line per deprecated setting still in nightshift.toml (it loads and does nothing): `check` and the run's
    start print it."""
    named = sorted({c.name.split(":", 1)[0] for c in (oracle.compare if oracle else []) if c.allow_exact})
    if not named:
        return []
    return [f"nightshift.toml: allow_exact (on {', '.join(repr(n) for n in named)}) is deprecated and does nothing: "
            "an exact match computed with the references out of reach passes (reported as matched bit for bit); "
            "delete the line"]
