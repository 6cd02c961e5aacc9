"""The predicate's claims held to the run's event log, where it is here (the run's machine: the log is not in git):
once its first ``bytes`` are the attested ones, the log is the record the claims were taken from, so the verdict
(passed, summary, claimed, when, which shift and turn), the commit nightshift made of it, the tests' verdict, the
ratchet's start and flaky tests, the judge's verdict, the held-out account and the run's totals are read back from
it and compared. The ratchet's ids are compared with the run folder's tests-passed.json.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.findings import Findings


def _events(blob: bytes) -> list[dict[str, Any]]:
    out = []
    for line in blob.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def check_log_claims(found: Findings, blob: bytes, predicate: dict[str, Any]) -> None:
    """``blob``: the event log's attested first bytes."""
    from nightshift.supervisor.attest.facts import bits_released, hours_between
    from nightshift.supervisor.run.state import apply, empty_state
    events = _events(blob)
    run = predicate.get("run") or {}
    verdicts = [i for i, e in enumerate(events) if e.get("type") == "verify.finished"]
    number = run.get("verdict")
    found.claim("run", "result", "commit", "judge.verdict", "heldout", "run_totals")  # compared below, always
    if not isinstance(number, int) or not 1 <= number <= len(verdicts):
        found.mismatch(f"claim run.verdict = {number!r}: the event log has {len(verdicts)} verdict(s)")
        return
    at = verdicts[number - 1]
    event, data = events[at], events[at].get("data") or {}
    wrong: list[str] = []

    def same(name: str, attested: Any, logged: Any) -> None:
        if attested != logged:
            wrong.append(f"claim {name} = {_short(attested)} is not what the event log says ({_short(logged)})")

    result = predicate.get("result") or {}
    same("result.passed", result.get("passed"), bool(data.get("passed")))
    same("result.claimed", result.get("claimed"), data.get("claimed"))
    same("result.summary", result.get("summary"), str(data.get("summary", ""))[:2000])
    same("run.verified_at", run.get("verified_at"), event.get("ts"))
    same("run.shift", run.get("shift"), event.get("shift"))
    same("run.turn", run.get("turn"), data.get("turn"))
    if data.get("lane") is not None and data.get("sha"):
        upto, head = at, data["sha"]
    else:
        upto = next((i for i in range(at + 1, len(events)) if events[i].get("type") in
                     ("commit.created", "commit.skipped")), len(events) - 1)
        head = (events[upto].get("data") or {}).get("head")
    same("commit", predicate.get("commit"), head)
    tests = predicate.get("tests") or {}
    check = next((c for c in data.get("checks") or [] if c.get("name") == "tests"), None)
    if check is not None:
        found.claim("tests.passed", "tests.summary")
        same("tests.passed", tests.get("passed"), bool(check.get("passed")))
        same("tests.summary", tests.get("summary"), check.get("summary"))
    base = next(((e.get("data") or {}) for e in reversed(events[:at]) if e.get("type") == "tests.baseline"), {})
    if "flaky" in tests:
        found.claim("tests.flaky")
        same("tests.flaky", tests.get("flaky"), sorted(base.get("flaky") or []))
    judge = predicate.get("judge") or {}
    record = data.get("judge")
    logged = "not asked" if not record else ("pass" if record.get("passed") else
                                             ("unavailable" if not record.get("available") else "fail"))
    same("judge.verdict", judge.get("verdict"), logged)
    state = empty_state()
    for past in events[: upto + 1]:
        apply(state, past)
    totals, held = predicate.get("run_totals") or {}, predicate.get("heldout") or {}
    same("run_totals.shifts", totals.get("shifts"), len(state.get("shifts") or []))
    same("run_totals.cost_usd", totals.get("cost_usd"), round(float(state.get("cost_usd") or 0), 6))
    same("run_totals.hours", totals.get("hours"), hours_between(state.get("created"), event.get("ts")))
    same("heldout.evaluations", held.get("evaluations"), int((state.get("heldout") or {}).get("evaluations") or 0))
    bits = bits_released(events[: at + 1])
    for comp in predicate.get("comparisons") or []:
        if comp.get("heldout"):
            same(f"comparisons[{comp.get('name')}].released_bits", comp.get("released_bits"),
                 bits.get(comp.get("name"), 0.0))
    for line in wrong:
        found.mismatch(line)
    if not wrong:
        found.ok(f"the verdict, its commit, tests, judge, held-out account and totals are what the event log says "
                 f"(verdict {number}, seq {event.get('seq')})")


def check_ratchet_ids(found: Findings, workspace: Path, run_folder: str, predicate: dict[str, Any]) -> None:
    """``run_folder``: the run's folder relative to the workspace (read through no link, as any workspace file)."""
    from nightshift.supervisor.run.untrusted import read_text
    ids = ((predicate.get("tests") or {}).get("ratchet") or {}).get("ids")
    if ids is None:
        return
    try:
        have = sorted(str(t) for t in json.loads(read_text(workspace, f"{run_folder}/tests-passed.json")))
    except (OSError, ValueError, TypeError):
        return
    found.claim("tests.ids")
    if have == ids:
        found.ok(f"the ratchet's {len(ids)} test id(s) are the run folder's tests-passed.json")
    else:
        extra = sorted(set(ids) - set(have))[:5]
        found.mismatch(f"claim tests.ratchet.ids is not the run folder's tests-passed.json ({len(ids)} vs "
                       f"{len(have)}; not in the run's: {extra})")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "…"
