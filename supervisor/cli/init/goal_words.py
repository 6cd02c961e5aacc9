"""Tolerances from the goal's own words, for `nightshift init`: "to 0.1%" (rtol 1e-3), "1e-10 relative, 1e-14
absolute" (rtol and atol), "within 10^-5" (rtol); and a field's own, where the goal names it: "rho and energy to
1e-10 relative, momx to 1e-6 relative" gives rho and energy 1e-10 and momx 1e-6.

A name counts where the goal writes it as a word of its own, as the field is named (case as written, two characters
or more: a one-letter name such as T is too easily an ordinary word). Its tolerance is the first one the goal states
after it, before the next name and before the sentence (or a ";") ends; names side by side ("rho and energy",
"rho, momx") share it. What the goal says of no name in particular is the tolerance of everything else. A field is
named by the last word of its path that is not a generic one (``short_name``: "/state/rho/data" is rho).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

DEFAULT_RTOL = 1e-3

NUM = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|10\s*(?:\^|\*\*)\s*[-+]?\d+|10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
PERCENT = re.compile(NUM + r"\s*(?:%|percent|per ?cent)", re.IGNORECASE)
WORDED = re.compile(NUM + r"\s*(?:in\s+)?(relative|rel\b|rtol|absolute|abs\b|atol)", re.IGNORECASE)
SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?[eE]-\d+|10\s*(?:\^|\*\*)\s*-\d+|10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
SIDE_BY_SIDE = re.compile(r"\s*(?:,|&|/|\band\b|\bor\b)?\s*")  # what may stand between two names of one group
SENTENCE_END = re.compile(r";|\.(?:\s|$)")  # not ":": "rho: 1e-8 relative" names its tolerance


@dataclass
class Tolerance:
    rtol: float
    atol: float = 0.0
    source: str = ""  # the goal's words it came from; "" for the default
    # The goal states an absolute tolerance ("1e-14 absolute", even "0 absolute"): init uses it as it is, and
    # derives none from the reference's scale (cli/init/scales.py).
    atol_stated: bool = False

    def comment(self) -> str:
        if self.source:
            return f"tolerance from the goal ({self.source!r})"
        return (f"rtol = {DEFAULT_RTOL:g} is a default: the goal states no tolerance (like \"0.1%\" or "
                "\"1e-6 relative\"); set rtol/atol per comparison below")


def _number(text: str) -> float:
    text = text.translate(SUPERSCRIPT).replace(" ", "")
    match = re.fullmatch(r"10(?:\^|\*\*)([-+]?\d+)|10(-\d+)", text)  # 10^-6, 10**-6, 10⁻⁶ (not 100)
    if match:
        return 10.0 ** int(match.group(1) or match.group(2))
    return float(text)


def tolerance_from_goal(goal: str) -> Tolerance:
    """"to 0.1%" -> rtol 1e-3; "1e-6 relative" -> rtol 1e-6; "1e-10 absolute" -> atol 1e-10; else the default."""
    rtol = atol = None
    sources: list[str] = []
    for match in WORDED.finditer(goal):
        value = _number(match.group(1))
        if match.group(2).lower().startswith(("abs", "atol")):
            atol = value if atol is None else atol
        elif rtol is None:
            rtol = value
        sources.append(match.group(0))
    if rtol is None and (match := PERCENT.search(goal)):
        rtol = _number(match.group(1)) / 100
        sources.append(match.group(0))
    if rtol is None and atol is None and (match := SCIENTIFIC.search(goal)):
        rtol = _number(match.group(1))
        sources.append(match.group(0))
    if rtol is None and atol is None:
        return Tolerance(DEFAULT_RTOL)
    return Tolerance(rtol if rtol is not None else 0.0, atol or 0.0, ", ".join(sources), atol is not None)


def _first_stated(words: str) -> tuple[Tolerance, int, int] | None:
    """The first tolerance ``words`` state (with a worded one right after it: "1e-10 relative, 1e-14 absolute"),
    and where its words start and end; None when they state none."""
    # at one place, the longest reading first: "1e-10 absolute", not "1e-10"
    found = sorted(((m.start(), m.end(), m) for pattern in (WORDED, PERCENT, SCIENTIFIC)
                    for m in pattern.finditer(words)), key=lambda f: (f[0], -f[1]))
    if not found:
        return None
    start, end, _ = found[0]
    for s, e, match in found[1:]:
        if s >= end and match.re is WORDED and SIDE_BY_SIDE.fullmatch(words[end:s]):
            end = e
    return tolerance_from_goal(words[start:end]), start, end


def name_tolerances(goal: str, names: Iterable[str]) -> tuple[dict[str, Tolerance], str]:
    """({name: its own tolerance} for the names the goal gives one, the goal with those words taken out)."""
    spots = sorted((m.start(), m.end(), name) for name in set(names) if len(name) >= 2
                   for m in re.finditer(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", goal))
    out: dict[str, Tolerance] = {}
    rest, i = goal, 0
    while i < len(spots):
        group = [spots[i]]
        while i + 1 < len(spots) and SIDE_BY_SIDE.fullmatch(goal[group[-1][1]:spots[i + 1][0]]):
            i += 1
            group.append(spots[i])
        after = group[-1][1]
        end = spots[i + 1][0] if i + 1 < len(spots) else len(goal)
        stop = SENTENCE_END.search(goal, after, end)
        stated = _first_stated(goal[after:stop.start() if stop else end])
        if stated is not None:
            tolerance, start, finish = stated
            for _, _, name in group:
                out.setdefault(name, tolerance)
            span = slice(after + start, after + finish)
            rest = rest[:span.start] + " " * (span.stop - span.start) + rest[span.stop:]  # same length: spots hold
        i += 1
    return out, rest


def goal_tolerances(goal: str, names: Iterable[str]) -> tuple[Tolerance, dict[str, Tolerance]]:
    """(the tolerance of everything the goal names no tolerance for, {name: its own})."""
    own, rest = name_tolerances(goal, names)
    general = tolerance_from_goal(rest)
    if not general.source:  # every tolerance stated belongs to a name: the goal's first is the rest's too
        general = tolerance_from_goal(goal)
    for its in own.values():  # "momx to 1e-8 relative" says nothing of an absolute floor: the general one holds
        if not re.search(r"abs|atol", its.source, re.IGNORECASE):
            its.atol, its.atol_stated = general.atol, general.atol_stated
    return general, own


GENERIC = {"data", "value", "values", "field", "fields", "array", "dataset"}


def short_name(field_key: str) -> str:
    """How a goal names a field: the last word of its path that is not a generic one ("/state/rho/data": rho)."""
    parts = [p for p in field_key.strip("/").split("/") if p]
    named = [p for p in parts if p.lower() not in GENERIC]
    return (named or parts or [field_key])[-1]
