"""CLAUDE.md's Definition of done, read one way everywhere: where the section is, its words, its items.

The section is the user's: the PreToolUse hook refuses an edit of it, the boundary check puts it back at every
stop, the judge grades against its items and the preflight says whether it has any. It is a list of checkboxes
(CLAUDE.md.template), and an agent that ticks them is reporting, not rewriting: two sections with the same words
and other ticks are the same Definition of done.

Standard library only: the PreToolUse hook imports this before every tool call of the agent (``python -S``).
"""
from __future__ import annotations

import re

# "## Definition of done" (any case, words may follow); the section runs to the next heading of level 1 or 2,
# so a "### sub-heading" inside it is part of it.
HEADING = re.compile(r"^##[ \t]+definition of done\b[^\n]*$", re.M | re.I)
NEXT_HEADING = re.compile(r"^#{1,2}[ \t]", re.M)
_BOX = re.compile(r"^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)\[[ xX]\]", re.M)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(.*\S)\s*$")


def span(text: str) -> tuple[int, int] | None:
    """(start, end) of the section in ``text``, its heading line included; None when there is none."""
    heading = HEADING.search(text)
    if heading is None:
        return None
    after = NEXT_HEADING.search(text, heading.end())
    return heading.start(), after.start() if after else len(text)


def section(text: str) -> str:
    """The section's text (heading included), or "" when CLAUDE.md has none."""
    where = span(text)
    return text[where[0]:where[1]] if where else ""


def words(section_text: str) -> str:
    """The section with every checkbox unticked and trailing white space dropped: what the user wrote."""
    return _BOX.sub(r"\1[ ]", section_text).rstrip()


def same_words(before: str, after: str) -> bool:
    """Whether two CLAUDE.md texts have the same Definition of done, ticks aside."""
    return words(section(before)) == words(section(after))


def body_lines(text: str) -> list[str]:
    """The section's non-blank lines under its heading (HTML comments, the template's hints, left out)."""
    lines = section(text).splitlines()[1:]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("<!--")]


def items(text: str) -> list[str]:
    """The list items of the section, checkboxes stripped (the judge's rubric)."""
    found = (_ITEM.match(line) for line in section(text).splitlines()[1:])
    return [match.group(1) for match in found if match]
