"""The held-out exam: what the agent may learn about a held-out comparison, and how much a run gives away.

A held-out comparison is the one part of a verdict a solver cannot memorise, so what it says is rationed:
- only at a claim of done is it released at all, and then only pass or a coarse band of the miss (``BANDS``);
  at any other stop, and in `nightshift compare` inside a run, it says it is evaluated at a claim of done;
- the Ladder (Blum & Hardt 2015): a failing band is released only when it is better than the best released so
  far; otherwise the agent hears "no better than your best so far", which it knew already;
- every release costs at most log2(the number of answers it could have given) bits, and ``[oracle]
  heldout_budget`` caps their sum: past it, nothing about the held-out comparisons is released.
The full figures go to a private folder the namespace hides (``write_private``); only the user's views read them.
The Ladder's state is folded from ``verify.finished`` events (run/state.py), so a kill -9 loses none of it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from nightshift.supervisor.run.heldout import budget_line, full_lines, private_folder, read_private  # noqa: F401 - re-exported

# band 0 passes; a failing comparison is in band 1, 2 or 3 by its worst error over its tolerance
BANDS = ("passes", "fails, within 10x its tolerance", "fails, within 100x its tolerance",
         "fails, by more than 100x its tolerance (or cannot be compared)")
FLOOR = len(BANDS) - 1  # the Ladder's start: "more than 100x" is what an agent knows before any answer
AT_CLAIM = "evaluated only when you claim done (`nightshift claim done`)"
UNAVAILABLE = "not evaluated: a held-out reference is unavailable (the run pauses until the user restores it)"
WITHHELD = "not released: the run's held-out budget is spent (the run pauses for a person unless it passes)"


@dataclass
class Exam:
    """What the oracle is told about the run's held-out exam. ``claimed``: this verdict answers a claim of done.
    ``best``/``bits``: the Ladder and the bits released so far (from the fold). ``private``: where full figures go."""
    claimed: bool = False
    best: dict[str, int] = field(default_factory=dict)
    bits: float = 0.0
    budget: float = 32.0
    private: Path | None = None

    @classmethod
    def from_state(cls, state: dict | None, claimed: bool, budget: float, private: Path | None) -> "Exam":
        held = (state or {}).get("heldout") or {}
        return cls(claimed, {k: int(v) for k, v in (held.get("best") or {}).items()}, float(held.get("bits") or 0.0),
                   budget, private)


def band(entry: dict) -> int:
    """0 passes; 1 within 10x; 2 within 100x; 3 more, or not measured (an error, NaN, an uncovered range)."""
    if entry.get("passed"):
        return 0
    try:
        ratio = float(entry.get("ratio"))
    except (TypeError, ValueError):
        return FLOOR
    if entry.get("error") or not math.isfinite(ratio):
        return FLOOR
    return 1 if ratio <= 10 else 2 if ratio <= 100 else FLOOR


def answers(best: int) -> int:
    """How many answers a release could give when the best band so far is ``best``: the better bands, and "no
    better" (which, at the floor, is the floor's own answer); after a pass, two: it passes, or it does not."""
    return max(best + 1, 2)


def ladder(before: int, now: int, bands: tuple[str, ...], again: str, no_better: Callable[[str], str]) -> str:
    """The Ladder's word for band ``now`` when the best released so far is ``before`` (the last band: none yet): a
    pass, or a failing band better than the best; else ``again`` after a pass, the floor's own word at the floor, and
    ``no_better(bands[before])`` (what the agent knew already) between."""
    floor = len(bands) - 1
    if now == 0 or now < before:
        return bands[now]
    if before == 0:
        return again
    return bands[floor] if before == floor else no_better(bands[before])


def release(results: list[dict], exam: Exam) -> tuple[dict[str, str], dict | None]:
    """Each held-out comparison's word for the agent, and the release record (None: nothing was released)."""
    held = [e for e in results if e.get("heldout")]
    if not held:
        return {}, None
    gone = {e["name"]: e["error"] if "put the original" in e["error"] else
            f"held-out reference {e['name']!r} is unavailable ({e['error']}): put the file back where its "
            "[[oracle.compare]] reference = points, then `nightshift resume`"
            for e in held if e.get("error_side") == "reference" and e.get("error_kind") == "missing file"}
    if gone:  # nothing to evaluate against: the run pauses for the user (shift/decide.py), nothing is released
        return ({e["name"]: UNAVAILABLE for e in held},
                {"evaluations": 0, "bits": 0.0, "withheld": False, "best": {}, "unavailable": gone})
    if not exam.claimed:
        return {e["name"]: AT_CLAIM for e in held}, None
    cost = sum(math.log2(answers(exam.best.get(e["name"], FLOOR))) for e in held)
    if exam.bits + cost > exam.budget + 1e-9:
        return {e["name"]: WITHHELD for e in held}, {"evaluations": 0, "bits": 0.0, "withheld": True, "best": {}}
    words, best = {}, {}
    for entry in held:
        before, now = exam.best.get(entry["name"], FLOOR), band(entry)
        words[entry["name"]] = ladder(before, now, BANDS, "fails (it passed at an earlier claim)",
                                      lambda b: f"fails, no better than your best so far ({b.split(', ', 1)[1]})")
        best[entry["name"]] = min(before, now)
    return words, {"evaluations": len(held), "bits": round(cost, 6), "withheld": False, "best": best}


def agent_entry(entry: dict, word: str) -> dict:
    """A held-out comparison as the agent may see it: its name, its word, and pass/fail only when released."""
    out = {"name": entry["name"], "heldout": True, "result": word, "passed": None}
    if word not in (AT_CLAIM, WITHHELD):
        out["passed"] = bool(entry.get("passed")) and word != UNAVAILABLE
    if entry.get("error") and entry.get("error_side") == "candidate" and word != AT_CLAIM:
        out["error"] = entry["error"]  # about the agent's own file only: it says nothing about the reference
    return out


def private_name(out_dir: Path) -> str:
    """The private report's name for a verdict's oracle folder (shifts/<n>/t<turn>.oracle -> "<n>-t<turn>.oracle")."""
    return f"{out_dir.parent.name}-{out_dir.name}.json"


def write_private(folder: Path, out_dir: Path, results: list[dict], problems: list[str], record: dict | None) -> None:
    """The full held-out figures, for the user only, where the boundary hides them."""
    from nightshift.supervisor.run.paths import make_private_dir
    from nightshift.supervisor.verify.oracle.integrity import _write_json
    from nightshift.supervisor.verify.oracle.report import strict_json

    make_private_dir(folder)
    body = {"comparisons": [e for e in results if e.get("heldout")], "problems": problems, "release": record}
    _write_json(folder / private_name(out_dir), strict_json(body))


