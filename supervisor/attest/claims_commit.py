"""The predicate's claims held to what the attested commit itself holds (git's objects, never a checkout):
nightshift.toml at the commit (its digest, then what it says: the goal, the oracle and test commands, each
comparison's files and every column's tolerance, the judge's model), CLAUDE.md's Definition of done (digest and
items), the commit message nightshift wrote for the verdict (PASS or FAIL, shift and turn), and the subjects (the
commit, each candidate by the digest the comparisons name). Each claim that does not hold is one line naming it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.digests import sha256_bytes
from nightshift.supervisor.attest.findings import Findings
from nightshift.supervisor.attest.gitnotes import blob_at, git
from nightshift.supervisor.config import CONFIG_NAME

MESSAGE = re.compile(r"nightshift: shift (\d+) turn (\d+): (PASS|FAIL)\b")


def _same(a: Any, b: Any) -> bool:
    try:
        return a == b or float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _claim(found: Findings, name: str, attested: Any, committed: Any, where: str) -> None:
    found.claim(name)
    if _same(attested, committed):
        return
    found.mismatch(f"claim {name} = {attested!r} is not what {where} says ({committed!r})")


def check_config(found: Findings, workspace: Path, commit: str, predicate: dict[str, Any]):
    """nightshift.toml at ``commit``: its digest, then each claim it can answer. Returns the parsed config (None:
    not there, or not loadable)."""
    from nightshift.supervisor.attest.config_view import run_config
    from nightshift.supervisor.errors import UserError
    toml = blob_at(workspace, commit, CONFIG_NAME)
    want = (predicate.get("oracle") or {}).get("config_sha256")
    found.claim("oracle.config_sha256")
    if toml is None or sha256_bytes(toml) != want:
        found.mismatch(f"{CONFIG_NAME} at {commit[:12]} is not the attested one" + (
            " (it is not in the commit: `nightshift run` commits it at the run's start)" if toml is None else ""))
        return None
    found.ok(f"{CONFIG_NAME} at {commit[:12]}: sha256 {want[:16]}… as attested")
    where = f"{CONFIG_NAME} at {commit[:12]}"
    try:
        text = toml.decode("utf-8")
        # read as data with nightshift's defaults (config_view: no pydantic, a third of verify-result's time); a
        # block of `fields` is expanded into comparisons only by the schema, which is then loaded to read it
        config = run_config(text)
        if any(getattr(c, "fields", None) for c in (config.oracle.compare if config.oracle else [])):
            from nightshift.supervisor.config.schema import parse_config
            config = parse_config(text, where)
    except (UserError, UnicodeDecodeError, ValueError) as exc:  # ConfigError is a UserError
        found.mismatch(f"{where} does not load ({exc}): none of its claims can hold")
        return None
    _claim(found, "goal", predicate.get("goal"), config.goal, where)
    oracle = predicate.get("oracle") or {}
    _claim(found, "oracle.command", oracle.get("command"), config.oracle.command if config.oracle else None, where)
    tests = predicate.get("tests") or {}
    if tests.get("command") is not None or config.verify.test_command:
        _claim(found, "tests.command", tests.get("command"), config.verify.test_command or None, where)
    judge = predicate.get("judge") or {}
    if judge.get("asked"):
        _claim(found, "judge.model", judge.get("model"), config.judge.model if config.judge else None, where)
    _comparisons(found, predicate, config, where)
    return config


def _comparisons(found: Findings, predicate: dict[str, Any], config, where: str) -> None:
    compares = {c.name: c for c in (config.oracle.compare if config.oracle else [])}
    found.claim("comparisons.config")
    wrong = 0
    for comp in predicate.get("comparisons") or []:
        name = comp.get("name")
        cfg = compares.get(name)
        if cfg is None:
            found.mismatch(f"claim comparisons[{name}] names a comparison {where} does not have")
            wrong += 1
            continue
        before = len(found.lines)
        _claim(found, f"comparisons[{name}].heldout", comp.get("heldout"), cfg.heldout, where)
        if not comp.get("heldout"):
            for side in ("candidate", "reference"):
                _claim(found, f"comparisons[{name}].{side}", (comp.get(side) or {}).get("path"),
                       getattr(cfg, side), where)
            for col in comp.get("columns") or []:
                over = cfg.per_column.get(str(col.get("column")))
                for key in ("rtol", "atol"):
                    if key in col:
                        value = over.get(key) if isinstance(over, dict) else getattr(over, key, None)
                        _claim(found, f"comparisons[{name}].columns[{col.get('column')}].{key}", col[key],
                               value if value is not None else getattr(cfg, key), where)
                if "tolerance" in col:
                    _claim(found, f"comparisons[{name}].columns[{col.get('column')}].tolerance", col["tolerance"],
                           cfg.tolerance, where)
        wrong += len(found.lines) > before
    if not wrong:
        found.ok(f"every comparison's files and tolerances are {where}'s")


def check_definition_of_done(found: Findings, workspace: Path, commit: str, predicate: dict[str, Any]) -> None:
    from nightshift.supervisor.verify import definition_of_done as dod
    claimed = predicate.get("definition_of_done") or {}
    text = (blob_at(workspace, commit, "CLAUDE.md") or b"").decode("utf-8", "replace")
    section = dod.section(text)
    got = sha256_bytes(dod.words(section).encode()) if section else None
    found.claim("definition_of_done")
    if got != claimed.get("sha256"):
        found.mismatch(f"CLAUDE.md's Definition of done at {commit[:12]} is not the attested one")
    elif claimed.get("items") is not None and claimed.get("items") != dod.items(text):
        found.mismatch(f"claim definition_of_done.items is not the list CLAUDE.md at {commit[:12]} holds")
    else:
        found.ok(f"CLAUDE.md's Definition of done at {commit[:12]}: as attested" if got else
                 f"CLAUDE.md at {commit[:12]} has no Definition of done, as attested")


def check_message(found: Findings, workspace: Path, commit: str, predicate: dict[str, Any]) -> None:
    """The verdict nightshift wrote into the commit's message when it committed the verified turn."""
    proc = git(workspace, "log", "-1", "--format=%B", commit, "--", check=False)
    match = MESSAGE.match(proc.stdout.decode(errors="replace"))
    if not match:
        return  # not a commit of nightshift's (a fleet's lane, a user's): its message says nothing of a verdict
    run = predicate.get("run") or {}
    passed = (predicate.get("result") or {}).get("passed")
    found.claim("commit")
    said = f"commit {commit[:12]}'s message (nightshift's: shift {match.group(1)} turn {match.group(2)}: " \
           f"{match.group(3)})"
    if (match.group(3) == "PASS") != bool(passed):
        found.mismatch(f"claim result.passed = {passed} on commit {commit[:12]}, but {said}")
    elif (run.get("shift") is not None and run.get("lane") is None  # a fleet's commit is a lane's: its shift and turn
          and (str(run.get("shift")), str(run.get("turn"))) != match.groups()[:2]):
        found.mismatch(f"claim run.shift/turn = {run.get('shift')}/{run.get('turn')}, but {said}")
    else:
        found.ok(f"{said} agrees")


def check_subjects(found: Findings, statement: dict[str, Any], predicate: dict[str, Any]) -> None:
    """subject[] is what policy engines match on: the commit by gitCommit, each candidate by its sha256, no other."""
    commit = str(predicate.get("commit", ""))
    subjects = [s for s in statement.get("subject") or [] if isinstance(s, dict)]
    found.claim("subject")
    commits = [s for s in subjects if s.get("name") == "commit"]
    if len(commits) != 1 or (commits[0].get("digest") or {}) != {"gitCommit": commit}:
        found.mismatch(f"subject commit's digest is not {{gitCommit: {commit[:12]}…}}, the predicate's commit")
    want = {(c["candidate"]["path"], c["candidate"]["sha256"]) for c in predicate.get("comparisons") or []
            if not c.get("heldout") and (c.get("candidate") or {}).get("sha256")}
    have = {(s.get("name"), (s.get("digest") or {}).get("sha256")) for s in subjects if s.get("name") != "commit"}
    for name, digest in sorted(have - want, key=str):
        found.mismatch(f"subject {name}: sha256 {str(digest)[:16]}… is no candidate digest the comparisons attest")
    for name, digest in sorted(want - have, key=str):
        found.mismatch(f"subject {name} (sha256 {digest[:16]}…) is missing from subject[]")
    if not (have ^ want) and len(commits) == 1:
        found.ok(f"subject[]: the commit and {len(want)} candidate digest(s), as the predicate names them")
