"""`nightshift init --holdout-tests SELECTION...`: which of the workspace's tests become held-out tests, and moving
them into nightshift's private store (outside the workspace, hidden from every process of the agent's code), where
the supervisor runs them over the candidate at a claim of done (verify/heldout_tests.py).

A selection is a test file, a folder (every test file in it), ``FILE::NAME`` (one test function or class) or
``-k EXPR`` (pytest's keyword expression, matched against each test's file, class and function names). A file all of
whose tests are selected moves whole; otherwise it is split: the selected tests go to ``<stem>_heldout.py`` in the
store, the rest stay (imports and helpers are kept on both sides). Test files are parsed, never imported.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.cli.init.holdout import HoldoutError, private_home
from nightshift.supervisor.gitguard import run_git
from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.run.private import write_private_bytes
from nightshift.supervisor.verify.suite_config import WHOLE_FILE, config_files
from nightshift.supervisor.verify.pytest_source import is_test_file, tests_in

SKIP_DIRS = {".git", ".nightshift", ".venv", "venv", "node_modules", "__pycache__", ".tox"}
# What a run whose goal is tests cannot catch without held-out tests (said at init; README "Held-out tests")
UNCAUGHT = ("the goal is tests and none are held out: code that special-cases the tested inputs, answers recorded "
            "from an earlier run, or an object that equals everything passes them all the same (only a judge "
            "reading the diff can see it); hold some out with `nightshift init --holdout-tests tests/test_x.py` "
            "(a file, a folder, FILE::TEST or \"-k EXPR\")")


@dataclass
class HeldFile:
    """One test file's part in the plan: the held-out text (stored as ``stored``) and what stays (None: it goes)."""
    held: str
    stays: str | None
    stored: str  # its path in the store, relative (the file's own, or <stem>_heldout.py when split)
    tests: list[str] = field(default_factory=list)


def _test_files(folder: Path) -> list[Path]:
    out = []
    for root, dirs, files in os.walk(folder):  # os.walk follows no link into a folder
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        out += [Path(root) / f for f in sorted(files) if is_test_file(Path(f)) and not (Path(root) / f).is_symlink()]
    return out


def _without(source: str, nodes: list[ast.stmt]) -> str:
    """``source`` with the lines of ``nodes`` (decorators included) taken out."""
    lines = source.splitlines(keepends=True)
    drop = set()
    for node in nodes:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        drop.update(range(first - 1, node.end_lineno or node.lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _keyword(expr: str):
    """pytest's -k matcher for ``expr``: a function of the names a test is known by."""
    from _pytest.mark.expression import Expression
    try:
        compiled = Expression.compile(expr)
    except Exception as exc:  # noqa: BLE001 - pytest's ParseError: said as the user's input error
        raise HoldoutError(f"--holdout-tests \"-k {expr}\": not a keyword expression ({exc}); e.g. -k \"large or "
                           "sign\"") from None

    def matches(names: list[str]) -> bool:
        lowered = [n.lower() for n in names]
        return bool(compiled.evaluate(lambda word, **_: any(word.lower() in n for n in lowered)))
    return matches


def plan_tests(workspace: Path, selections: list[str]) -> dict[str, HeldFile]:
    """{workspace-relative test file: its part} for ``selections``; HoldoutError naming a selection that holds
    nothing, or one that would leave the agent no test at all."""
    ws = workspace.resolve()
    chosen: dict[Path, set[str]] = {}  # file -> names of its top-level tests held out
    for raw in selections:
        sel = raw.strip()
        if sel.startswith("-k"):
            matches = _keyword(sel[2:].strip())
            found = 0
            for path in _test_files(ws):
                stem = path.stem
                for node in tests_in(path.read_text(encoding="utf-8", errors="replace")):
                    methods = [m.name for m in getattr(node, "body", []) if isinstance(m, ast.FunctionDef)]
                    if matches([stem, node.name]) or any(matches([stem, node.name, m]) for m in methods):
                        chosen.setdefault(path, set()).add(node.name)
                        found += 1
            if not found:
                raise HoldoutError(f"--holdout-tests \"{sel}\": no test of {ws} matches; name a file, a folder, "
                                   "FILE::TEST or another -k expression")
            continue
        rel, _, name = sel.partition("::")
        path = (ws / rel).resolve()
        if not path.is_relative_to(ws) or not path.exists():
            raise HoldoutError(f"--holdout-tests {sel}: no such file or folder in {ws}; give a test file, a folder, "
                               "FILE::TEST or \"-k EXPR\"")
        files = _test_files(path) if path.is_dir() else [path]
        for file in files:
            names = [n.name for n in tests_in(file.read_text(encoding="utf-8", errors="replace"))]
            if name and name.split("::")[0] not in names:
                raise HoldoutError(f"--holdout-tests {sel}: {rel} defines no test {name!r} (it has: "
                                   f"{', '.join(names)[:200] or 'none'})")
            picked = {name.split("::")[0]} if name else set(names)
            if picked:
                chosen.setdefault(file, set()).update(picked)
        if not any(chosen.get(f) for f in files):
            raise HoldoutError(f"--holdout-tests {sel}: it holds no test (test_*.py files, test functions, Test "
                               "classes); give a file or folder of tests")
    plan: dict[str, HeldFile] = {}
    for path, names in sorted(chosen.items()):
        raw = path.read_bytes()
        source = raw.decode("utf-8", errors="replace")  # parsed only: a file held out whole moves byte for byte
        tests = tests_in(source)
        held = [n for n in tests if n.name in names]
        rel = str(path.relative_to(ws))
        if len(held) == len(tests):
            plan[rel] = HeldFile(source, None, rel, sorted(names))
            continue
        if source.encode("utf-8") != raw:
            raise HoldoutError(f"--holdout-tests: {rel} is not UTF-8 text, so it cannot be split into held-out and "
                               "visible tests; hold out the whole file, or save it as UTF-8")
        stem = path.stem if path.stem.startswith("test_") else f"test_{path.stem}"
        stored = str(path.with_name(f"{stem}_heldout.py").relative_to(ws))
        plan[rel] = HeldFile(_without(source, [n for n in tests if n.name not in names]), _without(source, held),
                             stored, sorted(names))
    left = [f for f in _test_files(ws) if str(f.relative_to(ws)) not in plan or plan[str(f.relative_to(ws))].stays]
    if not left:
        raise HoldoutError("--holdout-tests: that holds out every test of the workspace, so the agent sees none of "
                           "the goal; leave at least one test file visible")
    return plan


def _drop_empty(ws: Path, folder: Path) -> None:
    """A folder left empty by the move goes too (up to the workspace): nothing says where held-out tests were."""
    while folder != ws and folder.is_relative_to(ws):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def store_for(workspace: Path) -> Path:
    """The private folder of a workspace's held-out tests (``[verify] heldout_tests``): outside the workspace."""
    return private_home(workspace) / "tests"


def _held_config(ws: Path, plan: dict[str, HeldFile]) -> dict[str, bool]:
    """The user's pytest-only configuration on the held-out tests' way (conftest.py, pytest.ini), {path: moved}: kept
    in the store with them, so their run has the user's (the checkout takes out such files the run does not keep, as
    the agent's); moved where no visible test is beneath it, copied where one is."""
    visible = [f for f in _test_files(ws)
               if (part := plan.get(str(f.relative_to(ws)))) is None or part.stays is not None]
    return {str(path.relative_to(ws)): not any(f.is_relative_to(path.parent) for f in visible)
            for path in sorted(config_files(ws, {ws / rel for rel in plan})) if path.name in WHOLE_FILE}


def move_tests(workspace: Path, plan: dict[str, HeldFile]) -> list[str]:
    """Write the held-out tests (and the test configuration they need) into the store and take them out of the
    workspace; notes for the user (a file git already has stays readable in its history)."""
    ws, store = workspace.resolve(), store_for(workspace)
    files = store / "files"
    if files.exists():
        raise HoldoutError(f"--holdout-tests: {files} already exists (an earlier init held tests out); remove it or "
                           "keep the tests held out there")
    config = _held_config(ws, plan)  # before the tests move: which folders keep a visible test
    make_private_dir(make_private_dir(store) / "files")  # mkdir's parents get the umask's mode: these are the user's
    notes = []
    for rel, part in plan.items():
        dest = files / part.stored
        make_private_dir(dest.parent)
        write_private_bytes(dest, (ws / rel).read_bytes() if part.stays is None else part.held.encode("utf-8"))
        if part.stays is None:
            (ws / rel).unlink()
            _drop_empty(ws, (ws / rel).parent)
        else:
            (ws / rel).write_text(part.stays, encoding="utf-8")
        tracked = run_git(ws, "log", "--all", "--oneline", "-1", "--", rel)
        if tracked.returncode == 0 and tracked.stdout.strip():
            notes.append(f"{rel} is in this repository's git history, where the agent can still read its held-out "
                         "tests (`git log --all -p -- PATH`); hold out tests git never had, or rewrite that history")
    for rel, moved in config.items():
        write_private_bytes(make_private_dir((files / rel).parent) / Path(rel).name, (ws / rel).read_bytes())
        if moved:
            (ws / rel).unlink()
            _drop_empty(ws, (ws / rel).parent)
    return notes
