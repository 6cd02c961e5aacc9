"""What `verify-result` is given, read as a bundle of statements: a .dsse.json file (one envelope), a JSON Lines
bundle (an envelope a line, in-toto's bundle form), or a commit's git note (the same JSON Lines). Statements are
chosen by what they say, never by their order: nightshift's own about the commit in question (a passed verdict
before a failed one, the latest attested among equals), and beside it the standard statements of the same verdict
(in-toto test-result, SLSA VSA). A statement of a predicate type nightshift does not know is skipped and named.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.envelope import EnvelopeProblem, Opened, open_envelope
from nightshift.supervisor.attest.gitnotes import commit_of, read_note
from nightshift.supervisor.errors import UserError

MAX_ENVELOPE = 64 << 20
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
OURS = "https://nightshift.invalid/attestation/verified-result/v1"  # our predicate's type
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
VSA = "https://slsa.dev/verification_summary/v1"
KNOWN = (OURS, TEST_RESULT, VSA)


@dataclass
class Item:
    envelope: Opened
    statement: dict[str, Any]
    tag: dict[str, Any]  # the note's {"run", "verdict"} beside the envelope (empty in a file)
    where: str

    @property
    def kind(self) -> str:
        return str(self.statement.get("predicateType"))

    def commit(self) -> str | None:
        for subject in self.statement.get("subject") or []:
            digest = subject.get("digest") if isinstance(subject, dict) else None
            if isinstance(digest, dict) and digest.get("gitCommit"):
                return str(digest["gitCommit"])
        return None


@dataclass
class Bundle:
    ours: Item
    companions: list[Item] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one line per statement not read (unknown type, not JSON)


def _docs(target: str, workspace: Path) -> tuple[list[tuple[Any, str]], str, str | None]:
    """([(parsed line, where)], source, the commit asked for or None)."""
    path = Path(target)
    if path.is_file():
        if path.stat().st_size > MAX_ENVELOPE:
            raise EnvelopeProblem(f"{path} is larger than any attestation ({path.stat().st_size} bytes); give the "
                                  ".dsse.json file `nightshift attest` wrote")
        text = path.read_bytes().decode("utf-8", "replace")
        try:
            return [(json.loads(text), str(path))], str(path), None
        except ValueError as exc:
            lines = [line for line in text.splitlines() if line.strip()]
            if len(lines) < 2 or _parsed(lines[0]) is None:  # a bundle's first line is an envelope of its own
                raise EnvelopeProblem(f"{path} is not JSON ({exc}); give the .dsse.json file `nightshift attest` "
                                      "wrote") from None
            return [(_parsed(line), f"{path} line {n}") for n, line in enumerate(lines, 1)], str(path), None
    if not (workspace / ".git").exists():
        raise UserError(f"{target} is not a file, and {workspace} is not a git repository to look a commit up in; "
                        "give the attestation file, or --dir the clone")
    sha = commit_of(workspace, target)
    if sha is None:
        raise UserError(f"{target} is neither a file nor a commit of the repository at {workspace}; give the "
                        ".dsse.json file, or a commit that is there (`git fetch` it first)")
    lines = read_note(workspace, sha)
    if not lines:
        raise UserError(f"commit {sha[:12]} has no nightshift attestation in refs/notes/nightshift; `git fetch "
                        "origin refs/notes/nightshift:refs/notes/nightshift` brings published ones")
    where = f"the git note on {sha[:12]}"
    return [(_parsed(line), f"{where}, line {n}") for n, line in enumerate(lines, 1)], where, sha


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _rank(item: Item) -> tuple:
    predicate = item.statement.get("predicate") if isinstance(item.statement.get("predicate"), dict) else {}
    passed = (predicate.get("result") or {}).get("passed") is True if isinstance(predicate.get("result"), dict) else False
    run = predicate.get("run") if isinstance(predicate.get("run"), dict) else {}
    return (passed, str(run.get("attested_at", "")), str(run.get("verified_at", "")))


def load_bundle(target: str, workspace: Path) -> Bundle:
    docs, source, sha = _docs(target, workspace)
    items: list[Item] = []
    skipped: list[str] = []
    for doc, where in docs:
        if doc is None:
            skipped.append(f"{where}: not JSON (it was changed); the other statements are checked")
            continue
        tag = doc.pop("nightshift", None) if isinstance(doc, dict) else None
        try:
            envelope, statement = open_envelope(doc, where)
        except EnvelopeProblem as exc:
            if len(docs) == 1:
                raise
            skipped.append(f"{exc}; the other statements are checked")
            continue
        item = Item(envelope, statement, tag if isinstance(tag, dict) else {}, where)
        if item.kind not in KNOWN:
            skipped.append(f"{where}: a statement of predicate type {item.kind!r}, which nightshift does not know: "
                           "not checked (the others are)")
            continue
        items.append(item)
    ours = [i for i in items if i.kind == OURS and (sha is None or i.commit() == sha)]
    if not ours:
        said = f" ({'; '.join(skipped)})" if skipped else ""
        raise EnvelopeProblem(f"{source} holds no nightshift verified-result statement"
                              f"{' about ' + sha[:12] if sha else ''}{said}; give the .dsse.json file `nightshift "
                              "attest` wrote, or a commit with a nightshift note")
    chosen = max(ours, key=_rank)  # a passed verdict first, then the latest attested: never "the last line"
    if len(ours) > 1:
        skipped.append(f"{len(ours) - 1} other nightshift statement(s) about the same commit were not chosen "
                       f"(chosen: {chosen.where}, by verdict and time)")
    companions = [i for i in items if i.kind != OURS and i.commit() == chosen.commit()
                  and (not chosen.tag or not i.tag or i.tag == chosen.tag)]
    return Bundle(chosen, companions, skipped)
