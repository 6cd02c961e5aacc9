"""One budget for the whole fleet: [limits] max_cost_usd and max_hours count every lane together (each lane's own
supervisor still caps its shifts with max_shifts). The first limit spent, or None."""
from __future__ import annotations

from typing import Any


def spent_over(limits, rows: list[dict[str, Any]], hours: float) -> tuple[str, float, float] | None:
    cost = round(sum(float(r.get("cost_usd") or 0.0) for r in rows), 4)
    if limits.max_cost_usd and cost >= limits.max_cost_usd:
        return "max_cost_usd", limits.max_cost_usd, cost
    if hours > limits.max_hours:
        return "max_hours", limits.max_hours, round(hours, 2)
    return None
