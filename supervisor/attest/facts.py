"""What a run directory says about one verdict, read once for the Statement: the verify.finished event (the Nth of
the log), the commit it was committed as, the run's fold up to then (shifts, hours, cost, Slurm job, held-out
bits), the oracle's report of that turn (and the private held-out one), the run's frozen config, and the digests
the run took of its references when it began.

Readers are tolerant: a comparison record with fields this version does not know (N-d fields, new statistics) is
carried as far as it is understood, never refused.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.heldout import read_check_private, read_private
from nightshift.supervisor.run.paths import RunPaths, heldout_store
from nightshift.supervisor.run.state import apply, empty_state


class VerdictProblem(UserError):
    pass


@dataclass
class VerdictFacts:
    run: RunPaths
    number: int  # 1-based among the run's verdicts
    event: dict[str, Any]  # the verify.finished event
    commit: str
    state: dict[str, Any]  # the fold up to the verdict's commit
    config_text: str
    oracle: dict[str, Any] | None  # the turn's oracle.json
    heldout_private: dict[str, Any] | None
    references: dict[str, Any] = field(default_factory=dict)  # visible: path -> {sha256, size}
    heldout_refs: dict[str, Any] = field(default_factory=dict)  # name -> {sha256, size}
    slurm_job: dict[str, Any] = field(default_factory=dict)  # the verified turn's job, as the whole log knows it
    heldout_bits: dict[str, float] = field(default_factory=dict)  # name -> bits released about it up to the verdict
    outputs_gone: bool = False  # the candidates it measured are not in the workspace (a later verdict's oracle
    # wrote over them, or a fleet measured them in a checkout of its own): no candidate digests
    log_bytes: int = 0
    last_seq: int = 0
    baseline: dict[str, Any] = field(default_factory=dict)  # the test ratchet's start: the run's tests.baseline

    @property
    def data(self) -> dict[str, Any]:
        return self.event.get("data") or {}

    @property
    def passed(self) -> bool:
        return bool(self.data.get("passed"))

    def check(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.data.get("checks") or [] if c.get("name") == name), None)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def verdict_facts(run_root: Path, number: int | None = None) -> VerdictFacts:
    """The facts of verdict ``number`` (default: the run's last); a one-line error when there is none."""
    run = RunPaths(Path(run_root))
    if not run.events.is_file():
        raise VerdictProblem(f"{run.root} has no events.jsonl: not a run directory (see `nightshift ls`)")
    result = read_events(run.events)
    events = result.events
    verdicts = [i for i, e in enumerate(events) if e.get("type") == "verify.finished"]
    if not verdicts:
        raise VerdictProblem(f"run {run.run_id} has no verdict yet; attest it once a stop has been verified")
    number = len(verdicts) if number is None else number
    if not 1 <= number <= len(verdicts):
        raise VerdictProblem(f"run {run.run_id} has verdicts 1 to {len(verdicts)}; --verdict {number} is not one")
    at = verdicts[number - 1]
    event = events[at]
    data = event.get("data") or {}
    shift, turn = event.get("shift"), data.get("turn")
    if data.get("lane") is not None and data.get("sha"):
        # A fleet's verdict: its own check of the winning lane's commit, in a clean checkout of it (fleet/reverify.py).
        # The outputs it measured were in that checkout, which is gone.
        commit, upto, gone = str(data["sha"]), at, True
        check = run.fleet_check(int(data["lane"]), commit)
        oracle = _read_json(check / "verdict" / "t1.oracle" / "oracle.json")
        private = read_check_private(run.root, check.name)
    else:
        upto = next((i for i in range(at + 1, len(events)) if events[i].get("type") in
                     ("commit.created", "commit.skipped")), None)
        if upto is None or not (events[upto].get("data") or {}).get("head"):
            raise VerdictProblem(f"verdict {number} of run {run.run_id} has no commit yet (the supervisor commits "
                                 "right after a verdict); try again in a moment")
        commit = events[upto]["data"]["head"]
        oracle = _read_json(run.turn_file(shift, turn, "oracle") / "oracle.json")
        private = read_private(run.root, shift, turn)
        gone = any(e.get("type") == "verify.finished" and any(c.get("name") == "oracle" for c in
                   (e.get("data") or {}).get("checks") or []) for e in events[at + 1:])
    state = empty_state()
    for past in events[: upto + 1]:
        apply(state, past)
    try:
        config_text = run.config.read_text(encoding="utf-8")
    except OSError as exc:
        raise VerdictProblem(f"{run.config} is unreadable ({exc.strerror}): the run's frozen config is needed") from None
    manifest = _read_json(run.references / "manifest.json") or {}
    held = _read_json(heldout_store(run.references) / "manifest.json") or {}
    heldout_refs = {}
    for name, entry in (held.get("heldout") or {}).items():
        copy = heldout_store(run.references) / str(entry.get("copy", ""))
        heldout_refs[name] = {"sha256": entry.get("sha256"), "size": copy.stat().st_size if copy.is_file() else None}
    job = (state.get("slurm") or {}).get("job_id")
    slurm_job: dict[str, Any] = {}
    for e in events:  # its node and end may be recorded after the verdict (the job ends just after its turn)
        if e.get("type") == "slurm.job_changed" and job is not None and (e.get("data") or {}).get("job_id") == job:
            slurm_job.update({k: v for k, v in e["data"].items() if v not in (None, "")})
    return VerdictFacts(run=run, slurm_job=slurm_job, heldout_bits=bits_released(events[: at + 1]), number=number,
                        event=event, commit=commit, state=state, config_text=config_text, oracle=oracle,
                        heldout_private=private,
                        references=manifest.get("references") or {}, heldout_refs=heldout_refs, outputs_gone=gone,
                        log_bytes=result.offset, last_seq=int(events[-1].get("seq") or 0),
                        baseline=next(((e.get("data") or {}) for e in reversed(events[:at])
                                       if e.get("type") == "tests.baseline"), {}))


def bits_released(events: list[dict[str, Any]]) -> dict[str, float]:
    """Per held-out comparison, the bits its releases cost up to the last of ``events``: each release answers one
    of (best band so far + 1) words, as verify/oracle/exam.py counts them."""
    import math
    from nightshift.supervisor.verify.oracle.exam import FLOOR, answers
    best: dict[str, int] = {}
    bits: dict[str, float] = {}
    for event in events:
        record = (event.get("data") or {}).get("heldout") if event.get("type") == "verify.finished" else None
        if not record or not record.get("evaluations"):
            continue
        for name, band in (record.get("best") or {}).items():
            bits[name] = bits.get(name, 0.0) + math.log2(answers(best.get(name, FLOOR)))
            best[name] = int(band)
    return {name: round(value, 6) for name, value in bits.items()}


def hours_between(start: str | None, end: str | None) -> float | None:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((b - a).total_seconds() / 3600, 4)
