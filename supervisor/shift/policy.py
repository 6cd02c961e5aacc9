"""The run's boundary, compiled: from [policy], the oracle's references and the test ratchet to the rules the
agent's hands meet (``<run>/policy.json``, read by `nightshift hook pretool` and turned into Claude Code's
permission rules and sandbox settings), refreshed at every turn so the tests that passed since are protected too.

Also the sandbox probe (can bubblewrap run here?), and the refusals the hook records, which the supervisor turns
into ``policy.denied`` events (the hook never writes the event log: only the supervisor does).
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from nightshift.supervisor.config.schema import CONFIG_NAME, Config
from nightshift.supervisor.run.paths import RunPaths, user_state_dir
from nightshift.supervisor.run.private import write_private_json
from nightshift.supervisor.verify.boundary import test_files
from nightshift.supervisor.sandbox.boundary import heldout_tests_hidden
from nightshift.supervisor.sandbox.probe import bwrap_problem
from nightshift.supervisor.run.listing import matching

REFERENCE = "references are read-only: produce your outputs from the solver, never from the reference files"


def compile_policy(run: RunPaths, config: Config, passed_tests: set[str], sandbox: bool) -> dict[str, Any]:
    ws = run.workspace.resolve()
    protect: list[tuple[str, str, str]] = []
    for comp in config.oracle.compare if config.oracle else []:
        if not comp.heldout:
            ref = (ws / comp.reference.split(":", 1)[0]).resolve()
            protect.append((str(ref), "references", f"your edit of {{path}} was refused: {REFERENCE}"))
    protect += [
        (str(ws / CONFIG_NAME), "config", "your edit of {path} was refused: nightshift.toml is the user's"),
        (str(ws / ".nightshift") + "/**", "run_state", "your edit of {path} was refused: .nightshift/ is "
                                                        "nightshift's own state"),
        (str(ws / ".git") + "/**", "git_internals", "your edit of {path} was refused: use git commands, "
                                                    "not the repository's files"),
    ]
    for path in sorted(test_files(ws, passed_tests)):
        protect.append((str(path), "tests", "your edit of {path} was refused: it holds (or selects) the user's "
                                            "tests (those collected when the run began, failing or passing, and "
                                            "those that passed since), and they must keep passing unchanged; fix "
                                            "the code, not the test; if a goal test is wrong, claim blocked "
                                            "(`nightshift claim blocked --summary ...`) and say why"))
    for pattern in config.policy.protect:
        protect.append((str((ws / pattern).resolve()) if not pattern.endswith("**") else str(ws / pattern),
                        "protect", "your edit of {path} was refused: [policy] protect lists it"))
    hide = [(str(p), "held-out references are never readable: the verdict tells you how far off they are")
            for p in heldout_paths(ws, config)]
    hide += [(str(Path(p).expanduser().resolve()), "[policy] hide lists it: it is not for the agent to read")
             for p in config.policy.hide]
    hide += [(str(p), "held-out tests are never readable: a claim of done runs them and tells you pass or a band")
             for p in heldout_tests_hidden(config)]
    return {"v": 1, "workspace": str(ws), "plan": str(ws / "CLAUDE.md"), "writable": [tempfile.gettempdir()],
            "protect": protect, "hide": hide, "network": config.policy.network, "sandbox": sandbox,
            "run_dir": str(run.root), "run_files": run_files(run)}


def run_files(run: RunPaths) -> list[str]:
    """What the agent's shell must never write in the run directory (its claims folder stays writable)."""
    files = ["events.jsonl", "snapshot.json", "config.toml", "policy.json", "claude-settings.json", "supervisor.json",
             "tests-passed.json", "plan-known.json"]
    folders = ["references", "stops", "inbox", "refusals", "waits", "protected"]
    root = run.root.resolve()
    return [str(root / f) for f in files] + [f"{root / d}/**" for d in folders] + \
        [f"{run.workspace.resolve() / '.nightshift' / 'references'}/**"]


def heldout_paths(workspace: Path, config: Config) -> list[Path]:
    """Where held-out data can be read: each configured path and nightshift's private store of copies."""
    paths = [(workspace / c.reference.split(":", 1)[0]).resolve()
             for c in (config.oracle.compare if config.oracle else []) if c.heldout]
    return paths + ([user_state_dir() / "heldout"] if paths else [])


def write_policy(run: RunPaths, doc: dict[str, Any]) -> Path:
    path = run.root / "policy.json"
    write_private_json(path, doc)
    return path


def sandbox_problem() -> str | None:
    """Why Claude Code's sandbox (bubblewrap + socat) cannot run here, or None when it can."""
    missing = [tool for tool in ("bwrap", "socat") if not shutil.which(tool)]
    if missing:
        return (f"{' and '.join(missing)} not installed (Debian: apt-get install bubblewrap socat); the agent's "
                "shell runs without the sandbox")
    problem = bwrap_problem()
    return f"{problem}; the agent's shell runs without the sandbox" if problem else None


# ----- refusals recorded by the hook, collected by the supervisor ------------------------------------------
def take_refusals(run: RunPaths) -> list[dict[str, Any]]:
    """Refusals not yet recorded as events, oldest first; each is marked seen as it is taken."""
    out = []
    folder = run.refusals
    for path in matching(folder, ".json"):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8", errors="replace")))
        except ValueError:
            out.append({"tool": "?", "rule": "unreadable", "message": f"an unreadable refusal record {path.name}"})
        path.rename(path.with_suffix(".seen"))
    return out
