"""The boundary after the fact, at every stop and for every agent (the only layer for an agent nightshift cannot
hook): the files the agent may not change are kept in the run's private store as they were when they became
protected (nightshift.toml and CLAUDE.md's Definition of done when the run began, [policy] protect likewise, a
test's file when the test first passed); at every stop a changed or deleted one is put back and named. The
user's own uncommitted edits made before the run are what is kept, never overwritten. References have their own
integrity store (verify/oracle/integrity.py).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.run.private import write_private_bytes
from nightshift.supervisor.verify import definition_of_done as dod
from nightshift.supervisor.verify.checks import Check
from nightshift.supervisor.verify.suite_config import WHOLE_FILE, config_files

MANIFEST = "manifest.json"


def test_files(workspace: Path, test_ids: set[str]) -> set[Path]:
    """The files holding the ratchet's tests ("tests/test_x.py::name" or JUnit's "tests.test_x.Class::name"), and
    the test configuration that selects them (conftest.py, pytest.ini, ...: verify/suite_config.py)."""
    out = test_modules(workspace, test_ids)
    return out | {p.resolve() for p in config_files(workspace, out)} if out else out


def test_modules(workspace: Path, test_ids: set[str]) -> set[Path]:
    """The files holding the ratchet's tests, only."""
    out: set[Path] = set()
    for test_id in test_ids:
        head = test_id.split("::", 1)[0]
        if head.endswith(".py") and (workspace / head).is_file():
            out.add((workspace / head).resolve())
            continue
        parts = head.split(".")
        for n in range(len(parts), 0, -1):
            candidate = workspace.joinpath(*parts[:n]).with_suffix(".py")
            if candidate.is_file():
                out.add(candidate.resolve())
                break
    return out


def _manifest(store: Path) -> dict[str, str]:
    try:
        return json.loads((store / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def remember(store: Path, workspace: Path, paths: set[Path]) -> None:
    """Keep each path not kept yet (the state it is accepted in), and CLAUDE.md's Definition of done."""
    store.mkdir(mode=0o700, parents=True, exist_ok=True)
    kept, ws = _manifest(store), workspace.resolve()
    for path in sorted(paths):
        try:
            rel = str(path.resolve().relative_to(ws))
        except ValueError:
            continue
        if rel in kept:
            continue
        try:
            data = untrusted.read_bytes(ws, rel)  # kept only as a regular file inside the workspace
        except OSError:
            continue
        key = hashlib.sha256(rel.encode()).hexdigest()[:20]
        write_private_bytes(store / key, data)
        kept[rel] = key
    if "CLAUDE.md#dod" not in kept and untrusted.is_file(ws, "CLAUDE.md"):
        text = untrusted.read_text(ws, "CLAUDE.md")
        span = dod.span(text)
        if span:
            write_private_bytes(store / "definition_of_done", text[span[0]:span[1]].encode())
            kept["CLAUDE.md#dod"] = "definition_of_done"
    write_private_bytes(store / MANIFEST, json.dumps(kept).encode())


def protected_at_start(workspace: Path, protect: list[str]) -> set[Path]:
    ws = workspace.resolve()
    paths = {ws / "nightshift.toml"}
    for pattern in protect:
        paths |= {p for p in ws.glob(pattern) if p.is_file()}
    return paths


def forget(store: Path, workspace: Path, paths: set[Path]) -> list[str]:
    """Stop keeping ``paths`` (a person released the tests they held); the workspace-relative paths let go."""
    kept, ws = _manifest(store), workspace.resolve()
    gone = []
    for path in paths:
        try:
            rel = str(path.resolve().relative_to(ws))
        except ValueError:
            continue
        if rel in kept:
            (store / kept.pop(rel)).unlink(missing_ok=True)
            gone.append(rel)
    if gone:
        write_private_bytes(store / MANIFEST, json.dumps(kept).encode())
    return sorted(gone)


def move_new_config(workspace: Path, store: Path, test_ids: set[str], aside: Path) -> dict[str, str | None]:
    """A conftest.py or pytest.ini on the way to the ratchet's tests that was not there when the run began (so not
    kept) can deselect, skip or forge their outcomes: moved out of the workspace into ``aside`` before the tests
    run, as a kept file is put back. A project file (pyproject.toml, setup.cfg, tox.ini) that has a pytest section
    now and was not kept did not have one then: the section is as new, but the file is the project's, so it stays
    where it is and is named (None). {workspace-relative path: where it went, or None}."""
    kept, ws = _manifest(store), workspace.resolve()
    moved: dict[str, str | None] = {}
    for path in sorted(config_files(ws, test_modules(ws, test_ids))):
        rel = str(path.relative_to(ws))
        if rel in kept:
            continue
        if path.name not in WHOLE_FILE:
            moved[rel] = None
            continue
        dest = aside / rel
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.move(str(path), dest)
        moved[rel] = str(dest)
    return moved


def check_boundary(workspace: Path, store: Path) -> Check:
    """Put back what the agent changed of the kept files; a failing check naming each, else a passing one. The
    check's data keeps what the agent had written in each (None: deleted), for the ratchet to name its tests."""
    kept, ws, lines = _manifest(store), workspace.resolve(), []
    restored: dict[str, bytes | None] = {}
    for rel, key in sorted(kept.items()):
        if rel == "CLAUDE.md#dod":
            lines += _definition_of_done(ws, (store / key).read_text(encoding="utf-8", errors="replace"))
            continue
        before = (store / key).read_bytes()
        try:
            now, how = untrusted.read_bytes(ws, rel), "changed"
        except FileNotFoundError:
            now, how = None, "deleted"
        except OSError as exc:  # a link out, a FIFO: never followed, replaced by the kept file
            now, how = None, f"replaced ({exc})"
        if now != before:
            restored[rel] = now
            untrusted.write_beneath(ws, rel, before)
            lines.append(f"{rel} was {how} by the agent and has been restored: it is not the agent's to change")
    if not lines:
        return Check("boundary", True, "boundary: protected files unchanged")
    return Check("boundary", False, f"boundary: {len(lines)} protected file(s) changed by the agent, restored", lines,
                 {"restored": restored})


def _definition_of_done(ws: Path, kept: str) -> list[str]:
    """Put the kept section back when its words changed; ticking or unticking its boxes is the agent's to do."""
    try:
        now, how = untrusted.read_text(ws, "CLAUDE.md"), ""
    except untrusted.Untrusted as exc:  # a link out / not a file: the kept section goes into a file of its own
        now, how = "", f" ({exc})"
    except OSError:
        now, how = "", ""
    span = dod.span(now)
    if span is not None and dod.words(now[span[0]:span[1]]) == dod.words(kept):
        return []
    found = now[span[0]:span[1]] if span is not None else ""
    fixed = now[:span[0]] + kept + now[span[1]:] if span is not None else kept + "\n" + now
    untrusted.write_beneath(ws, "CLAUDE.md", fixed.encode("utf-8"))
    return ["CLAUDE.md's \"Definition of done\" was changed by the agent and has been restored: it is the user's"
            + (how or _first_change(dod.words(kept), dod.words(found)))]


def _first_change(kept: str, found: str) -> str:
    """The first line the agent changed, quoted short, so the push-back names what was undone."""
    kept_lines, found_lines = kept.splitlines(), found.splitlines()
    for i in range(max(len(kept_lines), len(found_lines))):
        was = kept_lines[i] if i < len(kept_lines) else ""
        now = found_lines[i] if i < len(found_lines) else ""
        if was.strip() != now.strip():
            shown = now.strip() or "(removed) " + was.strip()
            return f" (first changed line: {shown[:120]!r})"
    return ""
