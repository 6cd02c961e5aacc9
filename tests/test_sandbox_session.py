"""Issue 37: a command that runs the agent's code (the test command, the oracle command) has a session of its own,
with no controlling terminal, even where the supervisor has one (it runs in a tmux pane): nothing it prints to
/dev/tty reaches a screen, no key it pushes reaches a shell. The supervisor's side runs under a real pty here; the
command tries to open /dev/tty from inside the namespace."""
from __future__ import annotations

import os
import pty
import sys
from pathlib import Path

from tests.fixtures_core import wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace

TRY_TTY = "python3 -c \"import os; os.open('/dev/tty', os.O_RDWR)\" && echo TTY-REACHED || echo NO-TTY"
SIDE = """
import sys
import types; _n = types.ModuleType('nightshift'); _n.__path__ = [{root!r}]; sys.modules['nightshift'] = _n  # our package, by hand
from pathlib import Path
from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.sandbox.boundary import boundary_for
from nightshift.supervisor.verify.checks import run_shell
from nightshift.supervisor.verify.oracle.check import run_command
from nightshift.supervisor.sandbox.command import command_namespace
ws, out = Path({ws!r}), Path({out!r})
open('/dev/tty', 'w').close()  # the supervisor's side has a controlling terminal
boundary = boundary_for(ws, load_config(ws))
run_shell({cmd!r}, ws, 60, out / "test.log", boundary, "test")
with command_namespace(boundary, "oracle", {cmd!r}) as ns:
    run_command(ns.argv, {cmd!r}, ws, 60, out)
(out / "done").write_text("ok")
"""


def test_commands_have_no_controlling_terminal_even_when_the_supervisor_has_one(workspace, tmp_path):  # noqa: F811
    need_namespace()
    out = tmp_path / "out"
    out.mkdir()
    root = str(Path(__file__).resolve().parent.parent)
    script = SIDE.format(root=root, ws=str(workspace.path), out=str(out), cmd=TRY_TTY)
    pid, fd = pty.fork()
    if pid == 0:  # a new session whose controlling terminal is the pty, as a tmux pane is the supervisor's
        os.execv(sys.executable, [sys.executable, "-c", script])
    try:
        def drain() -> bool:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
            return (out / "done").exists()
        wait_for(drain, timeout=120, what="the supervisor's side to run both commands")
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    assert "NO-TTY" in (out / "test.log").read_text(), (out / "test.log").read_text()
    assert "NO-TTY" in (out / "command.stdout").read_text()
