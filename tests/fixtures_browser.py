"""Opening an HTML file in real headless Chromium (Debian's `chromium`), as a person would: the DOM after
rendering (``--dump-dom``) and a screenshot (PNG) kept as a test artifact.
"""
from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path

from tests.fixtures_core import require_tool

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--metrics-recording-only", "--mute-audio"]


def chromium(*args: str, profile: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    require_tool("chromium")
    # --no-sandbox: the tests run as root in CI containers, where Chromium's sandbox cannot start.
    return subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def open_in_browser(html: Path, shot: Path, height: int = 2400) -> str:
    """Render ``html``; write its screenshot to ``shot``; return the DOM as Chromium built it."""
    profile = shot.parent / "chromium-profile"
    url = html.resolve().as_uri()
    dom = chromium("--dump-dom", url, profile=profile)
    assert dom.returncode == 0 and "<html" in dom.stdout, dom.stderr[-2000:]
    pic = chromium(f"--screenshot={shot}", f"--window-size=1280,{height}", "--hide-scrollbars", url, profile=profile)
    assert pic.returncode == 0 and shot.exists() and shot.stat().st_size > 0, pic.stderr[-2000:]
    print(f"report screenshot kept at {shot}")
    return dom.stdout


class Page(HTMLParser):
    """What the page shows, by element id: text, attributes, table rows."""

    def __init__(self, dom: str):
        super().__init__()
        self.attrs: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self.rows: dict[str, int] = {}
        self._open: list[tuple[str, str | None]] = []
        self._table: list[str] = []
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.attrs[a["id"]] = {**a, "tag": tag}
            self.text.setdefault(a["id"], "")
        if tag == "table":
            self._table.append(a.get("id", ""))
        if tag == "tr" and self._table and self._table[-1]:
            self.rows[self._table[-1]] = self.rows.get(self._table[-1], 0) + 1
        if tag not in ("img", "br", "meta", "input"):
            self._open.append((tag, a.get("id")))

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table.pop()
        while self._open:
            t, _ = self._open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        for _, ident in self._open:
            if ident:
                self.text[ident] = self.text.get(ident, "") + data
