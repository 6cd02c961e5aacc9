"""The user's view of a run's held-out exam, for `status`, `log` and the report: what the run released to the agent
(evaluations, bits, against ``[oracle] heldout_budget``) and the full-precision figures the agent never sees, read
from the private store the namespace hides (verify/oracle/exam.py). A workspace with nothing held out is told so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.verify.oracle.exam import budget_line, full_lines, read_private

NOTHING_HELD = ("every comparison is visible: a solver that memorises the visible answers passes; hold out at least "
                "one data set (`nightshift init --reference-dir DIR --holdout NAME|N`)")


def _budget(run_root: Path) -> float | None:
    try:
        from supervisor.config.schema import parse_config
        oracle = parse_config((Path(run_root) / "config.toml").read_text()).oracle
    except Exception:  # noqa: BLE001 - a run without a readable frozen config still shows what it released
        return None
    return oracle.heldout_budget if oracle else None


def has_heldout(oracle) -> bool:
    return bool(oracle and any(c.heldout for c in oracle.compare))


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
