"""The absolute tolerance `nightshift init` derives from each reference data set's own scale when the goal states
none, and the lines it writes for it into nightshift.toml and into init's summary.

A relative tolerance alone means nothing where the reference is near zero: a field zero by symmetry (round-off,
6e-17) against the same scheme on another backend (2.2e-16) is "1.06 relative". So where the goal states no
absolute tolerance, each field and each compared table column gets atol = rtol x RMS(|reference|) (scales.py says
why the RMS), in the comparison's block with a comment saying where it came from. Where the goal states one, it is
used as it is and nothing is derived.

A data set that is zero everywhere has no scale to derive from: init says it needs an absolute tolerance and writes
none (only the goal, or the user, can say how close to zero is zero), so `nightshift check` refuses the comparison
in one line until one is stated. A held-out reference's floor is rounded down to a power of ten: nightshift.toml is
the agent's to read, and three digits of a held-out answer's RMS are a figure about that answer.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.cli.init.goal_words import short_name
from nightshift.supervisor.cli.init.scales import Scale, column_scales, field_scale
from nightshift.supervisor.verify.oracle.calibrate import no_scale
from nightshift.supervisor.verify.oracle.readers import split_part

if TYPE_CHECKING:
    from nightshift.supervisor.cli.init.goal_words import Tolerance
    from nightshift.supervisor.cli.init.references import Comparison, Survey

SUMMARY_LIMIT = 8  # derived tolerances listed one a line in init's summary; the rest are counted


@dataclass
class Derived:
    key: str  # the field as fields = [...] names it, the column as columns = [...] does; "" for a whole-file field
    label: str  # how a person reads it: "reference/tube.h5:/state/rho/data", "reference/cl.dat TT"
    rtol: float
    scale: Scale

    @property
    def zero(self) -> bool:
        return self.scale.rms == 0

    def atol(self, heldout: bool) -> float:
        value = float(f"{self.rtol * self.scale.rms:.3g}")
        return 10.0 ** math.floor(math.log10(value)) if heldout and value > 0 else value

    def comment(self, heldout: bool) -> str:
        if heldout:  # no figure of the held-out answer where the agent reads
            return ("derived: rtol x RMS(|reference|), rounded down to a power of ten (held out: its RMS stays "
                    "private); the goal states no absolute tolerance")
        over = "" if not self.scale.sampled else \
            f" over a sample of {self.scale.values} values" if self.scale.total is None else \
            f" over {self.scale.values} of {self.scale.total} values"
        return f"derived: rtol x RMS(|reference|) = {self.rtol:g} x {self.scale.rms:.3g}{over}; the goal states no " \
               "absolute tolerance"

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
        lines.append("  atol derived where the goal states none: rtol x RMS(|reference|) of each field and column "
                     "(written in nightshift.toml with its comment)")
        lines += [f"    {d.label}: atol = {d.atol(comp.heldout):g} (rtol {d.rtol:g} x RMS {d.scale.rms:.3g})"
                  for comp, d in made[:SUMMARY_LIMIT]]
        if len(made) > SUMMARY_LIMIT:
            lines.append(f"    ... and {len(made) - SUMMARY_LIMIT} more")
    lines += [f"  NEEDS atol {d.needs_atol()}" for _, d in found if d.zero]
    return lines
