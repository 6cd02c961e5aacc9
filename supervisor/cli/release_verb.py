"""`nightshift release RUN TEST --why "..."`: a person lets a test (or every test of a file) go from a run's test
ratchet, when it legitimately changes (renamed, split, replaced). Sent through the run's inbox and recorded by the
supervisor as a ``test.released`` event, which `status`, `log` and the report show.

Never the agent's: inside its namespace the run's inbox is read-only (the command fails there, saying so), the
verb refuses to run in an agent's turn, and Claude Code's PreToolUse hook refuses the command.
"""
from __future__ import annotations

import difflib
import getpass
import json
import os

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.registry import find_run


def cmd_release(args) -> int:
    from nightshift.supervisor.cli.verbs import _report_ack
    from nightshift.supervisor.run.inbox import send_command
    from nightshift.supervisor.run.state import load_state
    from nightshift.supervisor.shift.ratchet import held, named_tests

    if os.environ.get("NIGHTSHIFT_RUN_DIR") or os.environ.get("NIGHTSHIFT_NAMESPACE"):
        raise UserError("`nightshift release` is for a person, not for the agent's turn: fix the code so the test "
                        "passes, or claim blocked (`nightshift claim blocked --summary ...`) and say why it should "
                        "change")
    why = " ".join(str(args.why or "").split())
    if not why:
        raise UserError("say why the test may go: `nightshift release RUN TEST --why \"renamed to ...\"`")
    run = find_run(args.run)
    state = load_state(run.root)[0]
    if state["phase"] == "finished":
        raise UserError(f"run {run.run_id} has already finished; nothing to release")
    ids = held(state, _recorded(run.root))
    if not ids:
        raise UserError(f"run {run.run_id} has no test in its ratchet yet (no test command, or nothing passed when "
                        "it began); nothing to release")
    tests = named_tests(args.test, ids)
    if not tests:
        close = difflib.get_close_matches(args.test, sorted(ids), n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]}?" if close else f" (it holds {len(ids)}, e.g. {sorted(ids)[0]})"
        raise UserError(f"run {run.run_id}'s ratchet holds no test {args.test!r}{hint} Give a test id as the "
                        "verdicts name it, or a file for all of its tests")
    try:
        cmd_id, offset = send_command(run, "release", test=args.test, why=why, by=_who())
    except OSError as exc:
        raise UserError(f"cannot write run {run.run_id}'s inbox ({exc.strerror or exc}): `nightshift release` is for "
                        "a person, outside the agent's namespace") from None
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    print(f"release: {shown} ({why})")
    return _report_ack(run, cmd_id, offset, verb="release")


def _recorded(root) -> set[str]:
    try:
        return set(json.loads((root / "tests-passed.json").read_text()))
    except (OSError, ValueError):
        return set()


def _who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
