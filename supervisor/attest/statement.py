"""The in-toto Statement v1 of one verdict: subjects are the verified commit (by git commit id) and each candidate
output (by sha256); the predicate is nightshift's own (``PREDICATE_TYPE``, versioned; its JSON schema is
``predicate.schema.json`` beside this file and in this folder's README.md), validated before anything is signed.

A held-out comparison carries only pass or fail, its reference's digest and the bits the run released about
held-out comparisons: never a figure (the attestation sits in the workspace, where the agent reads).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.bundle import OURS as PREDICATE_TYPE, STATEMENT_TYPE
from nightshift.supervisor.attest.config_view import file_of
from nightshift.supervisor.attest.digests import digests_under, sha256_bytes
from nightshift.supervisor.attest.environment import environment
from nightshift.supervisor.attest.facts import VerdictFacts, hours_between
from nightshift.supervisor.attest.gitnotes import blob_at
from nightshift.supervisor.config import CONFIG_NAME
from nightshift.supervisor.run.events import utc_now
from nightshift.supervisor.verify import definition_of_done as dod

VERSION = 1.2  # the major is the type's /v1; a minor adds fields, which an older verifier reads and names
SCHEMA_FILE = Path(__file__).with_name("predicate.schema.json")
COLUMN_KEYS = ("column", "rtol", "atol", "scale", "tolerance", "points", "failing", "passed", "ratio", "rel_worst",
               "max_abs", "nonfinite")


@lru_cache(maxsize=1)
def predicate_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())


def _figure(value: Any) -> Any:
    """A figure as the oracle wrote it (non-finite ones are the strings "inf"/"nan"), anything else dropped."""
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None


def _column(col: dict[str, Any]) -> dict[str, Any]:
    out = {k: _figure(col[k]) if k not in ("column", "passed", "scale", "tolerance") else col[k]
           for k in COLUMN_KEYS if k in col}
    out["column"] = str(col.get("column"))
    # where the worst point is: whatever the record names (x, row, an N-d index), carried as it is
    out["where"] = {k: v for k, v in col.items() if ("worst" in k and k != "rel_worst") and v is not None}
    return out


def _comparison(facts: VerdictFacts, comp, entry: dict[str, Any] | None, digests: dict) -> dict[str, Any]:
    ref_path = file_of(comp.reference)
    if comp.heldout:
        private = next((e for e in (facts.heldout_private or {}).get("comparisons", []) if e.get("name") == comp.name),
                       None)
        passed = (private or {}).get("passed", (entry or {}).get("passed"))
        ref = facts.heldout_refs.get(comp.name) or {}
        return {"name": comp.name, "heldout": True, "passed": passed if isinstance(passed, bool) else None,
                "reference": {"sha256": ref.get("sha256"), "size": ref.get("size")},
                "released_bits": facts.heldout_bits.get(comp.name, 0.0)}
    ref = facts.references.get(ref_path) or {}
    entry = entry or {}
    cols = [_column(c) for c in entry.get("columns") or [] if isinstance(c, dict)]
    return {"name": comp.name, "heldout": False, "passed": bool(entry.get("passed")),
            "candidate": {"path": comp.candidate, "sha256": _text(digests.get(file_of(comp.candidate)))},
            "reference": {"path": comp.reference, "sha256": ref.get("sha256"), "size": ref.get("size")},
            "x": comp.x if comp.x is None or isinstance(comp.x, (str, int)) else str(comp.x),
            "columns": cols, "ratio": _figure(entry.get("ratio")), "error": entry.get("error")}


def _sandbox(tier: Any) -> dict[str, Any]:
    """The boundary's tier the verdict recorded (sandbox/tier.py), and what that tier leaves open."""
    from nightshift.supervisor.sandbox.tier import LEFT_OPEN, ORDER
    name = tier if tier in ORDER else "unknown"
    return {"tier": name, "left_open": list(LEFT_OPEN.get(name, ()))}


def _text(digest: Any) -> str | None:
    return digest if isinstance(digest, str) else None  # a missing candidate (or a link) has no digest


def _candidate_digests(facts: VerdictFacts, ws: Path, comps: list) -> dict[str, Any]:
    """Each visible candidate's digest, hashed side by side; none when the outputs the verdict measured are gone (a
    later verdict's oracle wrote over them, or a fleet measured them in its own checkout)."""
    if facts.outputs_gone:
        return {}
    paths = [file_of(c.candidate) for c in comps if not c.heldout]
    return {rel: found for (_root, rel), found in digests_under([(ws, p) for p in paths]).items()}


def _ratchet_ids(facts: VerdictFacts) -> list[str] | None:
    """The ratchet's set by id (the run folder's tests-passed.json); None where the runner gives no ids."""
    try:
        ids = json.loads((facts.run.root / "tests-passed.json").read_text())
    except (OSError, ValueError, TypeError):
        return None
    return sorted(str(t) for t in ids) if isinstance(ids, list) else None


def _tests(facts: VerdictFacts, config) -> dict[str, Any]:
    check = facts.check("tests")
    if check is None:
        return {"command": config.verify.test_command or None, "passed": None, "summary": "no test command"}
    regressed = re.search(r"(\d+) regressed", check.get("summary", ""))
    ids = _ratchet_ids(facts)
    base = facts.baseline
    out = {"command": config.verify.test_command, "passed": bool(check.get("passed")), "summary": check.get("summary"),
           "ratchet": {"regressed": int(regressed.group(1)) if regressed else None,
                       "protected_tests": len(ids) if ids is not None else None, "ids": ids},
           "flaky": sorted(base.get("flaky") or []),
           "baseline": {"per_test": base.get("per_test"), "runs": base.get("runs"),
                        "passing": sorted(base.get("passing") or []), "goal": sorted(base.get("goal") or [])}
           if base else None}
    held = _heldout_tests(facts, config)
    if held is not None:
        out["heldout"] = held
    return out


def _heldout_tests(facts: VerdictFacts, config) -> dict[str, Any] | None:
    """The held-out tests that graded the claim (`init --holdout-tests`), by id with their outcomes."""
    check = facts.check("heldout_tests")
    store = getattr(getattr(config, "verify", None), "heldout_tests", "")
    if check is None or not store:
        return None
    from nightshift.supervisor.run.heldout_tests_record import read_report, report_name
    report = read_report(Path(store).expanduser(), report_name(facts.run.run_id, facts.event.get("shift"),
                                                               facts.data.get("turn")))
    return {"passed": bool(check.get("passed")), "summary": check.get("summary"),
            "candidate_tree": (report or {}).get("tree"), "tests": (report or {}).get("outcomes") or {}}


def _judge(facts: VerdictFacts, config, dod_items: list[str]) -> dict[str, Any]:
    """The judge as it was asked: the rubric is the one verify/judge builds (the Definition of done's items, the
    configured criteria, the integrity criteria), its digest over the JSON list of its criteria."""
    record = facts.data.get("judge")
    if not record or config.judge is None:
        return {"asked": False, "verdict": "not asked"}
    from nightshift.supervisor.verify.judge.prompt import INTEGRITY_CRITERIA
    verdict = "pass" if record.get("passed") else ("unavailable" if not record.get("available") else "fail")
    rubric = list(dict.fromkeys(dod_items + [c for c in config.judge.criteria if c not in dod_items]))
    if getattr(config.judge, "integrity_checks", True):
        rubric += [c for c in INTEGRITY_CRITERIA if c not in rubric]
    return {"asked": True, "model": config.judge.model, "via": record.get("via"), "verdict": verdict,
            "rubric_sha256": sha256_bytes(json.dumps(rubric).encode()), "criteria": len(rubric)}


def build_statement(facts: VerdictFacts, config) -> dict[str, Any]:
    """The Statement (a dict), checked against the published schema."""
    ws = facts.run.workspace
    toml = blob_at(ws, facts.commit, CONFIG_NAME)
    claude = (blob_at(ws, facts.commit, "CLAUDE.md") or b"").decode("utf-8", "replace")
    section = dod.section(claude)
    entries = {e.get("name"): e for e in (facts.oracle or {}).get("comparisons") or [] if isinstance(e, dict)}
    compares = config.oracle.compare if config.oracle else []
    digests = _candidate_digests(facts, ws, compares)
    # the comparisons this verdict measured (a fast oracle runs some of them); held-out ones are always named
    comps = [_comparison(facts, c, entries.get(c.name), digests) for c in compares
             if c.name in entries or c.heldout]
    plan = facts.check("plan") or {}
    s = facts.state
    held = s.get("heldout") or {}
    predicate = {
        "version": VERSION,
        "run": {"id": facts.run.run_id, "verdict": facts.number, "shift": facts.event.get("shift"),
                "turn": facts.data.get("turn"), "verified_at": facts.event.get("ts"), "attested_at": utc_now(),
                **({"lane": int(facts.data["lane"])} if facts.data.get("lane") is not None else {})},
        "result": {"passed": facts.passed, "claimed": facts.data.get("claimed"),
                   "summary": str(facts.data.get("summary", ""))[:2000]},
        "goal": config.goal,
        "commit": facts.commit,
        "comparisons": comps,
        "heldout": {"evaluations": int(held.get("evaluations") or 0), "bits_released": float(held.get("bits") or 0.0),
                    "budget": float(config.oracle.heldout_budget) if config.oracle else None},
        "oracle": {"command": config.oracle.command if config.oracle else None,
                   "passed": (facts.check("oracle") or {}).get("passed"),
                   "config_file": CONFIG_NAME, "config_sha256": sha256_bytes(toml) if toml is not None else None},
        "tests": _tests(facts, config),
        "definition_of_done": {"sha256": sha256_bytes(dod.words(section).encode()) if section else None,
                               "items": dod.items(claude), "plan": plan.get("summary")},
        "judge": _judge(facts, config, dod.items(claude)),
        "environment": environment(config.agent.kind, config.agent.claude_bin, s, facts.slurm_job,
                                   model=config.agent.model, host=bool(config.attest.host),
                                   oracle_command=config.oracle.command if config.oracle else None, workspace=ws),
        "run_totals": {"shifts": len(s.get("shifts") or []), "cost_usd": round(float(s.get("cost_usd") or 0), 6),
                       "hours": hours_between(s.get("created"), facts.event.get("ts"))},
        "event_log": {"sha256": None, "bytes": facts.log_bytes, "last_seq": facts.last_seq},
        "signer": None,
        "sandbox": _sandbox(facts.data.get("sandbox")),
    }
    from nightshift.supervisor.attest.provenance import repository_uri
    uri = repository_uri(ws)
    subjects = [{"name": "commit", **({"uri": uri} if uri else {}), "digest": {"gitCommit": facts.commit}}]
    subjects += [{"name": c["candidate"]["path"], "digest": {"sha256": c["candidate"]["sha256"]}}
                 for c in comps if not c["heldout"] and c["candidate"]["sha256"]]
    return {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": PREDICATE_TYPE, "predicate": predicate}


def validate(statement: dict[str, Any]) -> list[str]:
    """Where ``statement``'s predicate breaks the published schema (empty: it validates)."""
    return read_predicate(statement)[0]


def _relaxed(node: Any) -> Any:
    """The schema with every ``additionalProperties: false`` taken out (how a newer minor version is read)."""
    if isinstance(node, dict):
        return {k: _relaxed(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    return [_relaxed(v) for v in node] if isinstance(node, list) else node


def _extras(errors) -> set[str]:
    out: set[str] = set()
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = set((error.schema.get("properties") or {}))
            at = "/".join(map(str, error.absolute_path))
            out.update(f"{at}/{k}" if at else k for k in error.instance if k not in known)
        out |= _extras(error.context or [])
    return out


def read_predicate(statement: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(where the predicate breaks the schema, the fields a newer minor version added that this one does not know).
    A predicate of a newer minor version (1.x above ours) is read with its extra fields named, never refused."""
    import jsonschema
    predicate = statement.get("predicate")
    version = predicate.get("version") if isinstance(predicate, dict) else None
    newer = isinstance(version, (int, float)) and not isinstance(version, bool) and VERSION < version < 2
    strict = jsonschema.Draft202012Validator(predicate_schema())
    if not newer:
        return [f"{'/'.join(map(str, e.absolute_path)) or '(predicate)'}: {e.message}"
                for e in strict.iter_errors(predicate)], []
    extras = sorted(_extras(strict.iter_errors(predicate)))
    relaxed = jsonschema.Draft202012Validator(_relaxed(predicate_schema()))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(predicate)'}: {e.message}"
            for e in relaxed.iter_errors(predicate)], extras
