"""The plan's checkboxes as the verdict counts them: the items of CLAUDE.md's "## Plan" section (the whole text when
there is no such heading), one per item text. The verdict's plan check and every view of its count (the TUI's Plan
tab) read them here, so "plan: 4/4 checked" never shows elsewhere as another count.
"""
from __future__ import annotations

import re

CHECKBOX = re.compile(r"^\s*[-*]\s+\[( |x|X)\]\s+(.*\S)\s*$")


def plan_section(text: str) -> str:
    """The "## Plan" section of CLAUDE.md (the whole text when there is no such heading)."""
    match = re.search(r"^##\s+Plan\b.*?$(.*?)(?=^##\s|\Z)", text, flags=re.M | re.S)
    return match.group(1) if match else text


def plan_items(text: str) -> dict[str, bool]:
    """{item text: checked} for every checkbox line of the plan section."""
    items: dict[str, bool] = {}
    for line in plan_section(text).splitlines():
        match = CHECKBOX.match(line)
        if match:
            items[match.group(2)] = match.group(1).lower() == "x"
    return items


def plan_count(text: str) -> tuple[int, int]:
    """(checked, items) of the plan, as the verdict's "plan: N/M checked" says it."""
    items = plan_items(text)
    return sum(items.values()), len(items)
