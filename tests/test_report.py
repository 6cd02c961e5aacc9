"""`nightshift report` opened in real headless Chromium and checked by what a person sees: the timeline image
present and not blank, one table row per turn (or per shift on a long run), the final verdict line with its
commit, nothing fetched from the network. Screenshots are kept in the test's tmp folder as artifacts."""
from __future__ import annotations

import base64
import io
import re
import subprocess
import sys

import pytest
from PIL import Image

from tests.fixtures_browser import Page, open_in_browser
from tests.fixtures_core import nightshift, require_tool
from tests.fixtures_report import write_long_run

BLUE = (31, 119, 180)    # matplotlib's first line colour (the first comparison)
GREEN_BOX = (230, 244, 234)  # the "verified done" verdict box


def has_colour(img: Image.Image, rgb: tuple[int, int, int], tol: int = 12) -> bool:
    small = img.convert("RGB")
    return any(all(abs(c - r) <= tol for c, r in zip(px, rgb)) for _, px in small.getcolors(1 << 24) or [])


def timeline_image(page: Page) -> Image.Image:
    src = page.attrs["timeline"]["src"]
    assert src.startswith("data:image/png;base64,")  # inline: nothing to fetch
    img = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
    img.load()
    return img


def no_network(html: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the report must not fetch anything"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    require_tool("tmux")
    require_tool("git")
    where = tmp_path_factory.mktemp("demo") / "ws"
    out = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "demo", "--headless", "--dir", str(where)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return next((where / ".nightshift" / "runs").glob("*"))


def test_report_of_the_demo_run_as_a_person_sees_it(demo_run, tmp_path):
    html = tmp_path / "report.html"
    out = nightshift("report", str(demo_run), "-o", str(html))
    assert out.returncode == 0, out.stderr
    assert "VERIFIED DONE at commit" in out.stdout and "git checkout" in out.stdout  # the terminal summary
    no_network(html.read_text())
    shot = tmp_path / "demo-report.png"
    page = Page(open_in_browser(html, shot))
    img = timeline_image(page)
    assert img.width > 300 and img.height > 200 and has_colour(img, BLUE)  # a drawn line, not a blank frame
    assert page.rows["shifts"] == 1 + 2  # header + the demo's two turns (Euler, then RK4)
    assert "shift 1: forward Euler" in html.read_text()  # the failed approach, with the shift that recorded it
    head = subprocess.run(["git", "-C", str(demo_run.parents[2]), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert page.text["verdict"].startswith(f"VERIFIED DONE at commit {head[:10]}")
    assert f"git checkout {head}" in page.text["reproduce"]
    seen = Image.open(shot)
    assert has_colour(seen, BLUE) and has_colour(seen, GREEN_BOX)  # the chart and the verdict box are on screen


def test_report_of_a_long_run_as_a_person_sees_it(tmp_path):
    run = write_long_run(tmp_path, shifts=1000, turns=2)
    html = tmp_path / "long.html"
    out = nightshift("report", str(run.root), "-o", str(html))
    assert out.returncode == 0, out.stderr
    no_network(html.read_text())
    page = Page(open_in_browser(html, tmp_path / "long-report.png", height=1600))
    img = timeline_image(page)
    assert img.width > 300 and has_colour(img, BLUE)
    assert page.rows["shifts"] == 1 + 1000  # 2000 verdicts: one row per shift
    assert page.text["verdict"].startswith("VERIFIED DONE at commit 000007d0cc")
    assert page.rows["human"] - 1 == 4  # refusal, breaker trip, breaker pause, nudge
    assert page.rows["handled"] - 1 == 2  # the preflight that passed, the API wait nightshift sat out
    assert "; 4 events needed a person" in out.stdout
    for words in ("policy refused Bash(git push*) (pushing is not allowed in a run)", "the model&#x27;s API asked to wait",
                  "the breaker tripped", "a person nudged the agent", "try the 2016 halofit"):
        assert words in html.read_text()
    assert "Halofit from the 2012 paper" in html.read_text()  # failed approaches from CHANGELOG.md
    assert "(held out)" not in page.text.get("verdict", "")
    assert "burn rate" in out.stdout and "projection" not in out.stdout  # finished: no projection
    assert "Slurm 1000.00 core-h" in out.stdout  # 2000 jobs of half a core-hour, counted as status counts them
    assert "preflight passed; starting gap: worst 2e+03x the tolerance" in html.read_text()


def test_report_of_an_unfinished_run_projects_the_budget(tmp_path):
    run = write_long_run(tmp_path, shifts=20, turns=2, finished=False)
    out = nightshift("report", str(run.root), "-o", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    assert "NOT FINISHED" in out.stdout and "projection: the" in out.stdout
