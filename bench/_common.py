"""Shared printing for the benchmarks in bench/: each figure beside its goal, with the ratio figure/goal.

A ratio under 1 meets a "less than" goal. Benchmarks print; they never fail on a figure (not timed tests).
"""
from __future__ import annotations

import math


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def against_goal(label: str, value: float, goal: float, unit: str, width: int = 54) -> str:
    """One line: ``label  value unit   goal < g unit   ratio r  (meets|MISSES)`` for a "less than" goal."""
    ratio = value / goal if goal else math.inf
    verdict = "meets" if value < goal else "MISSES"
    return f"  {label:<{width}} {value:10.3f} {unit:<4} goal < {goal:g} {unit:<4} ratio {ratio:6.3f}  ({verdict})"


def info(label: str, value: float, unit: str, width: int = 54) -> str:
    """A figure printed for context, with no goal (whole numbers print without decimals)."""
    number = f"{value:10d}" if isinstance(value, int) else f"{value:10.3f}"
    return f"  {label:<{width}} {number} {unit}"


def verdict(met: bool) -> str:
    return "meets" if met else "MISSES"


def at_least(label: str, value: float, goal: float, unit: str, width: int = 54) -> str:
    """One line for an "at least" goal (a speed-up): ``label  value unit   goal >= g unit  (meets|MISSES)``."""
    return f"  {label:<{width}} {value:10.1f} {unit:<4} goal >= {goal:g} {unit:<4} ({verdict(value >= goal)})"
