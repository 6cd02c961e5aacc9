"""The user's view of a run's held-out exam, for `status`, `log` and the report: what the run released to the agent
(evaluations, bits, against ``[oracle] heldout_budget``) and the full-precision figures the agent never sees, read
from the private store the namespace hides (verify/oracle/exam.py). A workspace with nothing held out is told so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from nightshift.supervisor.run.heldout import budget_line, full_lines, read_private, read_private_many

NOTHING_HELD = ("every comparison is visible: a solver that memorises the visible answers passes; hold out at least "
                "one data set (`nightshift init --reference-dir DIR --holdout NAME|N`)")


def _budget(run_root: Path) -> float | None:
    try:
        from nightshift.supervisor.config.schema import parse_config
        oracle = parse_config((Path(run_root) / "config.toml").read_text()).oracle
    except Exception:  # noqa: BLE001 - a run without a readable frozen config still shows what it released
        return None
    return oracle.heldout_budget if oracle else None


def has_heldout(oracle) -> bool:
    return bool(oracle and any(c.heldout for c in oracle.compare))


def holds_out(run) -> bool | None:
    """Does the run hold any comparison out (None: its frozen config cannot say)?"""
    from nightshift.supervisor.errors import UserError
    from nightshift.supervisor.shift.launcher import frozen_config

    try:
        return has_heldout(frozen_config(run).oracle)
    except (OSError, UserError):
        return None


def status_lines(run_root: Path, state: dict[str, Any]) -> list[str]:
    """The account line and the last verdict's held-out figures (full precision), or nothing when none exist."""
    lines = []
    account = budget_line(state.get("heldout"), _budget(run_root))
    if account:
        lines.append(f"exam       {account}")
    verdict = state.get("last_verdict") or {}
    full = read_private(run_root, state.get("shift"), verdict.get("turn")) if verdict else None
    lines += [f"           {line}" for line in full_lines(full)]
    return lines


def log_lines(run_root: Path, event: dict[str, Any]) -> list[str]:
    """Below a verify.finished line of `nightshift log`: that verdict's held-out figures, in full."""
    if event.get("type") != "verify.finished":
        return []
    return full_lines(read_private(run_root, event.get("shift"), (event.get("data") or {}).get("turn")))


def report_lines(report, full: bool) -> list[str]:
    """The report's held-out section. ``full``: the report is written outside the workspace (the agent cannot read
    it), so it gets the figures, and its timeline gets each verdict's held-out error over tolerance."""
    from nightshift.supervisor.run.heldout import private_folder

    if not report.heldout:
        return [NOTHING_HELD] if report.has_oracle else []
    state = report.state
    lines = [budget_line(state.get("heldout"), _budget(report.run_dir)) or "held-out: nothing released to the agent yet"]
    if not full:
        where = private_folder(report.run_dir).parent / "report.html"
        return lines + ["held-out figures are left out of this copy: it is inside the workspace, where the agent "
                        f"reads it; `nightshift report {report.run_id}` writes them to {where}"]
    found = read_private_many(report.run_dir, [(point["shift"], point["turn"]) for point in report.timeline])
    for point in report.timeline:
        private = found.get((point["shift"], point["turn"])) or {}
        for entry in private.get("comparisons", []):
            try:
                point["values"][entry["name"]] = float(entry["ratio"])
            except (TypeError, ValueError, KeyError):
                continue
    verdict = state.get("last_verdict") or {}
    return lines + full_lines(read_private(report.run_dir, state.get("shift"), verdict.get("turn")) if verdict else None)


def default_report_path(run_dir: Path, heldout: bool) -> Path:
    """Where `nightshift report` writes by default: the run directory, or, for a run with held-out comparisons,
    beside their private copies (outside the workspace and hidden from the agent), since it holds their figures."""
    from nightshift.supervisor.run.heldout import private_folder

    return private_folder(run_dir).parent / "report.html" if heldout else Path(run_dir) / "report.html"
