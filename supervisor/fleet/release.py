"""A person's `nightshift release` on a fleet's run: the tests leave the fleet's ratchet (a ``test.released`` event in
the fleet's log, for its report) and every lane's: a live lane's supervisor gets the same command through its
inbox, and a lane made later starts with the release already in its log (lanes.give_baseline).
"""
from __future__ import annotations

from typing import Any

from nightshift.supervisor.fleet.lanes_watch import lane_state
from nightshift.supervisor.fleet.state import lane_run
from nightshift.supervisor.run import inbox
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.shift.ratchet import kept, named_tests


def release_fleet(sup, command: dict[str, Any]) -> None:
    """``sup`` is the fleet's supervisor (fleet/loop.py)."""
    args, cid = command.get("args") or {}, command.get("id")
    why, wanted = str(args.get("why") or "").strip(), str(args.get("test") or "")
    tests = named_tests(wanted, kept(sup.state))
    if not why or not tests:
        reason = "say why (--why)" if not why else f"the fleet's ratchet holds no test {wanted!r}"
        sup.emit("command.rejected", id=cid, verb="release", reason=reason)
        return
    sup.emit("command.accepted", id=cid, verb="release")
    sup.emit("test.released", tests=tests, why=why, by=str(args.get("by") or "user"), files=[])
    for lane in sup.fleet["lanes"].values():
        run = lane_run(lane)
        state = lane_state(run)
        if state is not None and state["phase"] != "finished":
            inbox.send_command(run, "release", test=wanted, why=why, by=f"{args.get('by') or 'user'} (fleet)")
    sup.say(f"released from every lane's ratchet: {', '.join(tests[:5])}{' ...' if len(tests) > 5 else ''} ({why})")


def releases(events_path) -> list[dict[str, Any]]:
    """The fleet's releases so far (each ``test.released`` event's data), for a lane made after them."""
    return [e["data"] for e in read_events(events_path).events if e["type"] == "test.released"]
