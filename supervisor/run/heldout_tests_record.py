"""The user's record of a run's held-out tests (`init --holdout-tests`; verify/heldout_tests.py writes it): each
claim's run of them over its candidate tree, test by test, in a private folder beside the store, which the agent's
namespace hides. The report, the attestation and `check` read it from here.
"""
from __future__ import annotations

import json
from pathlib import Path

from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.run.private import write_private_bytes


def reports(store: Path) -> Path:
    return Path(store) / "reports"


def write_report(store: Path, name: str, body: dict) -> None:
    write_private_bytes(make_private_dir(reports(store)) / f"{name}.json", json.dumps(body, indent=1).encode())


def report_name(run_id: str, shift: int, turn: int) -> str:
    """The name of the report of the held-out tests' run at a run's stop (shift, turn)."""
    return f"{run_id}-{shift}-t{turn}"


def read_report(store: Path, name: str) -> dict | None:
    """One report by name ({"name", "tree", "outcomes", "always_equal", "problem"}); None when absent or unreadable."""
    try:
        return {"name": name, **json.loads((reports(store) / f"{name}.json").read_text())}
    except (OSError, ValueError, TypeError):
        return None


def read_reports(store: Path, run_id: str) -> list[dict]:
    """A run's held-out test runs, oldest first: {"name", "tree", "outcomes", "always_equal", "problem"} each."""
    out = []
    for path in sorted(reports(store).glob(f"{run_id}-*.json"), key=lambda p: p.stat().st_mtime):
        try:
            out.append({"name": path.stem, **json.loads(path.read_text())})
        except (OSError, ValueError):
            continue
    return out
