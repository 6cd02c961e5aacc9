"""What `nightshift init --reference-dir` finds in the references, and the [oracle] section it writes from it.

Every file is looked at with the oracle's own readers (``verify.oracle.peek``: headers and a sample only), so a
comparison written here reads its reference exactly as the oracle will. One comparison per data set: the x
column is the first monotonic one (by name when the header names it), the value columns are the others, by
name; the tolerance comes from the goal when it states one. Files that are not data are listed, not compared.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from nightshift.supervisor.cli.init.derived_atol import block_overrides, derive, field_overrides, summary_lines
from nightshift.supervisor.cli.init.goal_words import goal_tolerances, short_name
from nightshift.supervisor.cli.init.survey import Comparison, Survey
from nightshift.supervisor.verify.oracle.layout import monotonic
from nightshift.supervisor.verify.oracle.peek import DataSet, peek_file
from nightshift.supervisor.verify.oracle.pointers import absent_content
from nightshift.supervisor.verify.oracle.table import OracleInputError

# Never data: code, notes, documents, pictures, archives. Anything else is tried with the readers.
NOT_DATA = {".py": "a script", ".sh": "a script", ".ipynb": "a notebook", ".jl": "a script", ".r": "a script",
            ".m": "a script", ".c": "source code", ".h": "source code", ".cpp": "source code",
            ".f90": "source code", ".f": "source code", ".md": "notes", ".rst": "notes", ".pdf": "a document",
            ".ini": "settings", ".cfg": "settings", ".yaml": "settings", ".yml": "settings", ".toml": "settings",
            ".png": "a picture", ".jpg": "a picture", ".jpeg": "a picture", ".svg": "a picture",
            ".gz": "an archive", ".tar": "an archive", ".tgz": "an archive", ".zip": "an archive",
            ".xz": "an archive", ".bz2": "an archive", ".pkl": "a pickle", ".so": "a binary", ".o": "a binary"}
X_NAMES = ("l", "ell", "L", "k", "x", "t", "z", "r", "time", "times", "a", "tau")

def pick_x(names: list[str | None], columns) -> int | None:
    """The x column: a monotonic column, preferring a usual grid name, then any named one (a pandas index, an
    unnamed 0, 1, 2, ... column, is the row number, not the grid), else the first monotonic one."""
    grids = [i for i, c in enumerate(columns) if monotonic(c)]
    if not grids or len(columns) < 2:
        return None
    for wanted in X_NAMES:
        for i in grids:
            name = names[i]
            if name is not None and re.split(r"[\s(/\[]", name.strip(), maxsplit=1)[0] == wanted:
                return i
    named = [i for i in grids if names[i] is not None]
    return named[0] if named else grids[0]


def pandas_index(names: list[str | None], columns) -> bool:
    """A pandas CSV's first column: unnamed, 0, 1, 2, ... beside named columns."""
    if len(columns) < 2 or names[0] is not None or any(n is None for n in names[1:]):
        return False
    first = columns[0]
    return bool(len(first) and np.array_equal(first, np.arange(len(first), dtype=float)))


def _comparison(ws_rel: str, under_ref: str, candidate_dir: str, data: DataSet, name: str) -> Comparison:
    table = data.sample
    index = pandas_index(table.names, table.columns)
    x = pick_x([None] * index + table.names[index:], [np.array([])] * index + list(table.columns[index:]))
    repeated = {n for n in table.names if n is not None and table.names.count(n) > 1}
    # A header name that heads two columns ("aerr rerr aerr rerr") is written as the column's position
    key = lambda i: table.names[i] if table.names[i] is not None and table.names[i] not in repeated else i  # noqa: E731
    columns = [key(i) for i in range(len(table.columns)) if i != x and not (index and i == 0)]
    suffix = f":{data.part}" if data.part else ""
    notes = list(data.warnings)
    if repeated:
        notes.append(f"the header repeats {sorted(repeated)}: those columns are named by 0-based position "
                     f"({table.describe()})")
    if index:
        notes.append("the unnamed first column is a pandas index (0, 1, 2, ...): not compared")
    if x is None and len(table.columns) > 1:
        notes.append("no monotonic column in the first rows: compared row by row (set x if there is a grid)")
    return Comparison(name=name, reference=ws_rel + suffix, candidate=f"{candidate_dir}/{under_ref}{suffix}",
                      x=key(x) if x is not None else None, columns=columns, rows_seen=table.rows, notes=notes,
                      sample=table)


def _field_block(ws_rel: str, under_ref: str, candidate_dir: str, found: list[DataSet], name: str) -> Comparison:
    """One block for a file's fields: an .npy is its one field; a container lists its fields by name."""
    whole = len(found) == 1 and found[0].part is None
    return Comparison(name=name, reference=ws_rel, candidate=f"{candidate_dir}/{under_ref}", x=None, columns=[],
                      rows_seen=0, notes=field_notes(found), fields=[] if whole else [d.part for d in found],
                      shapes=[d.shape for d in found])


def field_notes(found: list[DataSet]) -> list[str]:
    """What init says of a file's fields: where their locations come from (a coordinate beside them, a grid the file
    states; one line for the fields that share it) and what the file states that is not used (a coordinate of the
    wrong length), each once."""
    by_located: dict[str, list[str]] = {}
    for data in found:
        if data.located:
            by_located.setdefault(data.located, []).append(data.part or "")
    notes = [f"{', '.join(parts[:3]) + (' ...' if len(parts) > 3 else '')}: " * (len(by_located) > 1 and any(parts))
             + f"located by {located}" for located, parts in by_located.items()]
    for data in found:
        said = [f"{data.part}: {w}" if data.part and data.part not in w else w for w in data.warnings]
        notes += [note for note in said if note not in notes]
    return notes


def survey_references(workspace: Path, reference_dir: str, candidate_dir: str = "out", goal: str = "") -> Survey:
    """Look at every file under ``reference_dir`` (relative to ``workspace``); nothing is written."""
    root = (workspace / reference_dir).resolve()
    comparisons: list[Comparison] = []
    skipped: list[tuple[str, str]] = []
    taken: set[str] = set()
    # a link whose target is absent is listed too: git-annex keeps data so until `git annex get`
    for path in sorted(p for p in root.rglob("*") if p.is_file() or (p.is_symlink() and not p.exists())):
        ws_rel = str(path.relative_to(workspace.resolve()))
        under = str(path.relative_to(root))
        if path.name.startswith(".") or path.suffix.lower() in NOT_DATA:
            skipped.append((ws_rel, NOT_DATA.get(path.suffix.lower(), "a hidden file")))
            continue
        try:
            if not path.exists():
                raise OracleInputError(absent_content(path) or f"{path}: a link to a missing file", kind=
                                       "content not fetched" if absent_content(path) else "broken link")
            found = peek_file(path)
        except OracleInputError as exc:
            skipped.append((ws_rel, f"{exc.kind}: {str(exc).replace(str(path) + ': ', '')}"))
            continue
        base = str(Path(under).with_suffix("")).replace("/", "-")
        fields = [data for data in found if data.is_field]
        if fields:
            name = base
            while name in taken:
                name += "'"
            taken.add(name)
            comparisons.append(_field_block(ws_rel, under, candidate_dir.rstrip("/") or ".", fields, name))
        for data in found:
            if data.is_field:
                continue
            name = base + (f"-{data.part.strip('/').replace('/', '-')}" if data.part else "")
            while name in taken:
                name += "'"
            taken.add(name)
            comparisons.append(_comparison(ws_rel, under, candidate_dir.rstrip("/") or ".", data, name))
    # Names come from the files: a field's own name, or a one-array file's name (an .npy is its one field). A file of
    # several fields is not a name the goal gives a tolerance to: its stem is often an English word ("output").
    names = {short_name(f) for c in comparisons for f in c.fields} | \
        {c.name for c in comparisons if c.shapes and not c.fields}
    general, own = goal_tolerances(goal, names)
    survey = Survey(comparisons, skipped, general, own)
    derive(workspace, survey)
    return survey


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings, numbers and lists of them are valid TOML


def oracle_section(survey: Survey) -> str:
    """The [oracle] section, with a comment for every choice a user may want to change."""
    tol = survey.tolerance
    out = ['\n[oracle]\ncommand = ""              # the command that writes the candidate outputs, e.g. '
           '"python -m solver --out out/"\ntimeout = "30m"\n', f"# {tol.comment()}\n"]
    if survey.skipped:
        out.append("# Not compared (not data):\n")
        out += [f"#   {rel}: {why}\n" for rel, why in survey.skipped]
    for comp in survey.comparisons:
        tol = survey.own.get(comp.name, survey.tolerance) if comp.shapes and not comp.fields else survey.tolerance
        out.append("\n")
        out += [f"# NOTE {comp.reference}: {note}\n" for note in comp.notes]
        out.append(f"[[oracle.compare]]\nname = {_toml(comp.name)}\ncandidate = {_toml(comp.candidate)}\n"
                   f"reference = {_toml(comp.reference)}\n")
        if comp.x is not None:
            out.append(f"x = {_toml(comp.x)}" + " " * max(1, 24 - len(_toml(comp.x))) + "# the monotonic column\n")
        if comp.fields:
            out.append(f"fields = {_fields_toml(comp.fields)}\n")
        if comp.shapes:
            out.append(f"# {_shapes_words(comp)}: each compared over all its elements\n")
        else:
            out.append(f"columns = {_toml(comp.columns)}\n")
        out.append(f"rtol = {tol.rtol:g}" + (f"               # {tol.comment()}" if tol is not survey.tolerance else "")
                   + "\n")
        if comp.heldout:
            out.append("heldout = true            # the agent learns only pass or a coarse band, at a claim of done\n")
        if tol.atol:
            out.append(f"atol = {tol.atol:g}\n")
            out.append('# tolerance = "sum"        # rtol and atol: "sum" (numpy), "either" (numdiff), "both" (strict)\n')
        out += field_overrides(survey, comp, tol) if comp.fields else block_overrides(comp)
        if comp.x is not None:
            out.append('# interpolate = "loglog"   # when the candidate\'s x grid differs from the reference\'s\n')
    return "".join(out)


def _fields_toml(fields: list[str]) -> str:
    """The list on one line when short, else one field a line (a readable block for a file of many fields)."""
    one = _toml(fields)
    if len(one) <= 100:
        return one
    return "[\n" + "".join(f"    {_toml(f)},\n" for f in fields) + "]"


def _shapes_words(comp: Comparison) -> str:
    shapes = sorted(set(comp.shapes))
    sizes = ", ".join(" x ".join(str(n) for n in shape) for shape in shapes[:3]) + (" ..." if len(shapes) > 3 else "")
    count = len(comp.fields) or 1
    return f"{count} field{'s' * (count != 1)} of {sizes}"


def describe(survey: Survey) -> list[str]:
    """What init found, for the terminal."""
    lines = []
    for comp in survey.comparisons:
        verb = "held out" if comp.heldout else "compare "
        if comp.shapes:
            names = ", ".join(comp.fields[:6]) + (" ..." if len(comp.fields) > 6 else "")
            lines.append(f"  {verb} {comp.reference}: {_shapes_words(comp)}" + (f" ({names})" if names else "")
                         + f"  (candidate {comp.candidate})")
            lines += [f"    note   {note}" for note in comp.notes]
            continue
        x = f"x = {comp.x}" if comp.x is not None else "row by row"
        cols = ", ".join(str(c) for c in comp.columns[:8]) + (" ..." if len(comp.columns) > 8 else "")
        lines.append(f"  {verb} {comp.reference}: {x}; columns {cols}  (candidate {comp.candidate})")
        lines += [f"    note   {note}" for note in comp.notes]
    lines += [f"  skip     {rel}: {why}" for rel, why in survey.skipped]
    lines.append(f"  {survey.tolerance.comment()}: rtol = {survey.tolerance.rtol:g}"
                 + (f", atol = {survey.tolerance.atol:g}" if survey.tolerance.atol else ""))
    lines += [f"  {name}: its own {its.comment()}: rtol = {its.rtol:g}, atol = {its.atol:g}"
              for name, its in sorted(survey.own.items())]
    return lines + summary_lines(survey)
