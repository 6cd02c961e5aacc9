"""The absolute floor `nightshift init` derives for each reference data set when the goal states none, and the lines
it writes for it into nightshift.toml and into init's summary.

A relative tolerance means what the goal says wherever the reference is clearly non-zero, over any dynamic range; it
means nothing only where a value is zero at the data's own precision (a field zero by symmetry: round-off, 6e-17,
against the same scheme on another backend, 2.2e-16, is "1.06 relative"). So where the goal states no absolute
tolerance, each field and each compared table column gets the floor roundoff.py derives (covering exactly the values
that are round-off; 0 when there are none), in the comparison's block with a comment saying what it covers, and how
to loosen it where the data cannot settle what the goal means (values under the largest's round-off that are not
zero by their neighbours, a column that changes sign). Where the goal states one, it is used as it is.

A data set that is zero everywhere has no scale to derive from: init says it needs an absolute tolerance and writes
none (only the goal, or the user, can say how close to zero is zero), so `nightshift check` refuses the comparison
in one line until one is stated. A held-out reference's figures are rounded to a power of ten (the floor down, the
loosening up) and its counts left out: nightshift.toml is the agent's to read.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.cli.init.goal_words import short_name
from nightshift.supervisor.verify.oracle.roundoff import FLOOR_SPREAD, FLOOR_ULPS, ZERO_ULPS, Floor
from nightshift.supervisor.cli.init.scales import column_scales, field_scale
from nightshift.supervisor.verify.oracle.calibrate import no_scale
from nightshift.supervisor.verify.oracle.readers import split_part

if TYPE_CHECKING:
    from nightshift.supervisor.cli.init.goal_words import Tolerance
    from nightshift.supervisor.cli.init.survey import Comparison, Survey

SUMMARY_LIMIT = 8  # derived tolerances listed one a line in init's summary; the rest are counted


def _power_down(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value)) if value > 0 else value


def _power_up(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value)) if value > 0 else value


@dataclass
class Derived:
    key: str  # the field as fields = [...] names it, the column as columns = [...] does; "" for a whole-file field
    label: str  # how a person reads it: "reference/tube.h5:/state/rho/data", "reference/cl.dat TT"
    rtol: float
    scale: Floor

    @property
    def zero(self) -> bool:
        return self.scale.zero

    def atol(self, heldout: bool) -> float:
        value = float(f"{self.scale.atol:.3g}")
        return _power_down(value) if heldout else value

    def _precision(self) -> str:
        return "float32" if self.scale.eps > 1e-10 else "float64"

    def why(self, heldout: bool) -> str:
        """What the floor covers, in a few words (init's summary line)."""
        f = self.scale
        if f.atol == 0:
            span = "" if heldout or f.decades < 1 else f" over {f.decades:.1f} decades"
            return f"no value is zero at {self._precision()}'s precision: relative everywhere{span}"
        if f.fallback:
            return f"the round-off of the largest value: a sample of {f.values} values may miss a row zero by symmetry"
        if heldout:
            return "the values zero at the data's precision (round-off), rounded down to a power of ten (held out)"
        return f"{f.zeros} of {f.values} values zero at {self._precision()}'s precision, relative elsewhere"

    def loosen(self, heldout: bool) -> list[str]:
        """Where the data cannot settle what the goal means: the stricter rule is written; how to loosen it."""
        f, out = self.scale, []
        if f.tiny and f.roundoff > f.atol:
            noise = _power_up(f.roundoff) if heldout else float(f"{f.roundoff:.3g}")
            many = "some values" if heldout else f"{f.tiny} values"
            out.append(f"{many} below the largest's round-off are compared relatively: if they are noise, loosen "
                       f"with atol = {noise:g}")
        if f.crossings:
            many = "it changes sign" if heldout else f"it changes sign {f.crossings} times"
            out.append(f"{many}: near its zeros the relative error grows; to compare there against the local "
                       "amplitude, loosen with an atol or a scale expression (scale = \"max\", \"sqrt(TT*EE)\")")
        return out

    def comment(self, heldout: bool) -> str:
        rule = f"derived: {self.why(heldout)}"
        f = self.scale
        if f.atol and not f.fallback and not heldout:
            made = f"{FLOOR_SPREAD} x the largest of them, {f.spread:.3g}" \
                if FLOOR_SPREAD * f.spread >= FLOOR_ULPS * f.eps * f.beside else \
                f"{FLOOR_ULPS} eps x the largest |v| beside them, {f.beside:.3g}"
            rule += f" (round-off: |v| <= {ZERO_ULPS} eps x the largest |v| beside it; atol = {made})"
        return "; ".join([rule, *self.loosen(heldout), "the goal states no absolute tolerance"])

    def needs_atol(self) -> str:
        return no_scale(self.label, self.scale.values)  # the calibration's words (nightshift check) too


def tolerance_of(survey: Survey, comp: Comparison, field: str | None) -> Tolerance:
    """The tolerance init writes for one field of ``comp`` (or its columns, with ``field`` None)."""
    if field is not None:
        return survey.own.get(short_name(field), survey.tolerance)
    if comp.shapes:  # a whole-file field: its block's tolerance, the goal's word for it when it names it
        return survey.own.get(comp.name, survey.tolerance)
    return survey.tolerance


def derive(workspace: Path, survey: Survey) -> None:
    """Measure the scale of every field and compared column whose tolerance states no atol (comp.derived)."""
    for comp in survey.comparisons:
        path, part = split_part(comp.reference)
        where = workspace / path
        if comp.fields:
            for field in comp.fields:
                tol = tolerance_of(survey, comp, field)
                scale = None if tol.atol_stated or not tol.rtol else field_scale(where, field)
                if scale is not None:
                    comp.derived.append(Derived(field, f"{path}:{field}", tol.rtol, scale))
            continue
        tol = tolerance_of(survey, comp, None)
        if tol.atol_stated or not tol.rtol:
            continue
        if comp.shapes:
            scale = field_scale(where, part)
            if scale is not None:
                comp.derived.append(Derived("", comp.reference, tol.rtol, scale))
            continue
        for key, scale in column_scales(where, part, comp.columns, comp.sample).items():
            comp.derived.append(Derived(key, f"{comp.reference} column {key}", tol.rtol, scale))


def _key(name: str) -> str:
    return json.dumps(name)  # a quoted TOML key: any field path or column name is one


def field_overrides(survey: Survey, comp: Comparison, block: Tolerance) -> list[str]:
    """The per_field lines of a block of fields: a field's own tolerance from the goal, its derived atol, or both
    in one line (TOML allows a key once); else one commented example."""
    derived = {d.key: d for d in comp.derived}
    out = []
    for field in comp.fields:
        own = tolerance_of(survey, comp, field)
        values, why = {}, []
        if own is not block and (own.rtol, own.atol) != (block.rtol, block.atol):
            values.update(rtol=own.rtol, atol=own.atol)
            why.append(own.comment())
        found = derived.get(field)
        if found is not None and found.zero:
            out.append(f"# NEEDS atol: {found.needs_atol()}\n")
        elif found is not None:
            values["atol"] = found.atol(comp.heldout)
            why.append(found.comment(comp.heldout))
        if values:
            inner = ", ".join(f"{k} = {v:g}" for k, v in values.items())
            out.append(f"per_field.{_key(field)} = {{ {inner} }}   # {'; '.join(why)}\n")
    if comp.fields and not any(line.startswith("per_field") for line in out):
        out.append(f"# per_field.{_key(comp.fields[0])} = {{ rtol = {block.rtol:g}, atol = 1e-14 }}"
                   "   # one field's own tolerance\n")
    return out


def block_overrides(comp: Comparison) -> list[str]:
    """A whole-file field's derived atol (the block's own), or a table's per compared column."""
    out = []
    for found in comp.derived:
        if found.zero:
            out.append(f"# NEEDS atol: {found.needs_atol()}\n")
        elif found.key == "":
            out.append(f"atol = {found.atol(comp.heldout):g}   # {found.comment(comp.heldout)}\n")
        else:
            out.append(f"per_column.{_key(found.key)} = {{ atol = {found.atol(comp.heldout):g} }}   "
                       f"# {found.comment(comp.heldout)}\n")
    return out


def summary_lines(survey: Survey) -> list[str]:
    """What init tells the user it derived, and which data sets need an absolute tolerance it cannot derive."""
    found = [(comp, d) for comp in survey.comparisons for d in comp.derived]
    made = [(comp, d) for comp, d in found if not d.zero]
    lines = []
    if made:
        lines.append("  atol derived where the goal states none: only values zero at the data's precision (round-off) "
                     "are compared absolutely, every other one relatively (|a - b| <= atol + rtol x |b|; each in "
                     "nightshift.toml with its comment)")
        for comp, d in made[:SUMMARY_LIMIT]:
            extra = "".join(f"; {words}" for words in d.loosen(comp.heldout))
            lines.append(f"    {d.label}: atol = {d.atol(comp.heldout):g} ({d.why(comp.heldout)}{extra})")
        if len(made) > SUMMARY_LIMIT:
            lines.append(f"    ... and {len(made) - SUMMARY_LIMIT} more")
    lines += [f"  NEEDS atol {d.needs_atol()}" for _, d in found if d.zero]
    return lines
