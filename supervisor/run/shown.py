"""Text from the workspace or the agent, made safe to show a person: the one function every verb and widget uses.

Claims, lab notes, plan lines, file, test and column names, refused lines, the judge's findings and Slurm job names
are a stranger's bytes. On a terminal an escape sequence in them acts: OSC 52 writes the clipboard, OSC 0/2 the
window title, OSC 8 makes a link, cursor-up plus erase-line rewrites an earlier line (hiding a FAIL), ESC[8m hides
all that follows. ``plain`` makes every control character visible as its escape (``\\x1b``), C1 controls and the
Unicode direction overrides (which reorder what is read) too, so nothing of it acts and a person sees it was
there. Tabs stay; newlines stay unless ``one_line`` (then a line cannot pose as a line of ours).

A leaf: imports nothing of nightshift's, so the CLI, the report and the TUI (which escapes markup on top) share it.
"""
from __future__ import annotations

import io
import re

# C0 controls but tab and newline, DEL, C1 controls; the bidi embeddings, overrides and isolates; the line and
# paragraph separators terminals may break on.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_UNSAFE_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object, one_line: bool = False) -> str:
    """``text`` with every control character and direction override shown as its escape, never acted on."""
    return (_UNSAFE_LINE if one_line else _UNSAFE).sub(_visible, str(text))


class ShownStream(io.TextIOBase):
    """A text stream that shows everything written through ``plain``: every verb's output passes it, so no line
    a verb prints (today's or a future one's) can carry the agent's escape sequences to the terminal."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(plain(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def isatty(self) -> bool:
        return self.raw.isatty()

    @property
    def buffer(self):  # raw bytes stay raw: `report -o -` writes its (escaped) HTML there
        return self.raw.buffer

    @property
    def encoding(self) -> str:
        return self.raw.encoding

    def writable(self) -> bool:
        return True
