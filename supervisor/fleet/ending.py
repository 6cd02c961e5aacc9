"""The fleet's decision and its end: the winner chosen ([fleet] select: the first lane the fleet verified, or the
lowest worst error over tolerance, then the lowest cost, once every lane has ended or the deadline passed), the
other lanes stopped, the winner merged into the run's branch, every lane written into CHANGELOG.md, and the
fleet's check of the winner recorded as the run's verdict. Each is recorded once, so a restart repeats nothing.

``sup`` is the fleet's supervisor (fleet.loop.FleetSupervisor).
"""
from __future__ import annotations

import json
from typing import Any

from nightshift.supervisor import gitops
from nightshift.supervisor.fleet import finish, lanes_watch as watch
from nightshift.supervisor.fleet.state import lane_run
from nightshift.supervisor.shift.attest_done import attest_at_done

ENDED = ("ended",)


def decide(sup) -> None:
    lanes = sup.fleet["lanes"]
    verified = [(int(k), x) for k, x in lanes.items() if x["outcome"] == "verified"]
    everyone_ended = all(x["status"] in ENDED for x in lanes.values())
    if sup.config.fleet.select == "first" and verified:
        k = min(verified, key=lambda kv: lanes_order(sup.fleet, kv[0]))[0]
        return sup.emit("fleet.decided", winner=k, reason="the first lane verified by the fleet")
    deadline = sup.config.fleet.deadline
    if verified and (everyone_ended or (deadline and sup.ledger.hours_used() * 3600 >= deadline)):
        k, lane = min(verified, key=lambda kv: (kv[1]["metric"] if kv[1]["metric"] is not None else 1e300,
                                                kv[1].get("cost_usd") or 0.0))
        seen = "" if lane.get("shown") is None else f" ({lane['shown']:.3g}, held-out comparisons aside)"
        return sup.emit("fleet.decided", winner=k, reason=f"the lowest worst error over tolerance{seen} of "
                         f"{len(verified)} verified lane(s)")
    if everyone_ended and lanes:
        write_changelog(sup, None, "")
        sup.emit("run.finished", outcome="failed", reason="no lane was verified done by the fleet")


def conclude(sup) -> None:
    winner = sup.fleet["winner"]
    for key, lane in sup.fleet["lanes"].items():
        if int(key) == winner or lane["status"] in ENDED and lane["outcome"] != "verified":
            continue
        run = lane_run(lane)
        if lane["status"] not in ENDED:
            watch.tell(run, "stop")
        state = watch.lane_state(run) or {"cost_usd": 0.0}
        outcome = "dominated" if lane["outcome"] == "verified" else "stopped"
        sup.end_lane(int(key), run, state, outcome, f"lane {winner} was kept")
    if not sup.fleet["merged"]:
        if sup.state["paused"]:
            return
        lane = sup.fleet["lanes"][str(winner)]
        sha = gitops.open_repo(sup.run_paths.workspace).git.rev_parse(lane["branch"])
        problem = finish.merge_problem(sup.run_paths.workspace, sup.fleet["planned"]["branch"],
                                       sup.fleet["planned"]["base"])
        if problem and gitops.head_sha(gitops.open_repo(sup.run_paths.workspace)) != sha:
            reason = (f"{problem}; the winner is kept on branch {lane['branch']}: merge it yourself, or put the "
                      f"branch back and `nightshift resume {sup.run_paths.run_id}`")
            sup.emit("run.paused", kind="git", reason=reason)
            return sup.say(f"fleet paused: {reason}")
        head, moved = (finish.merge_winner(sup.run_paths.workspace, lane["branch"], sup.run_paths.root / "set-aside")
                       if problem is None else (sha, []))
        sup.emit("fleet.merged", lane=winner, branch=lane["branch"], sha=head, set_aside=moved)
        if moved:
            sup.say(f"fleet: {len(moved)} untracked file(s) the winner also has were moved to "
                    f"{sup.run_paths.root / 'set-aside'} before the merge (e.g. {moved[0]})")
    write_changelog(sup, winner, sup.fleet["decided"]["reason"])
    record_winning_verdict(sup, winner)
    attest_winner(sup)
    sup.emit("run.finished", outcome="done", reason=f"lane {winner} verified by the fleet and merged "
              f"({sup.fleet['decided']['reason']})")


def record_winning_verdict(sup, winner: int) -> None:
    """The fleet's check of the winner is the run's verdict (what `wait`, `status` and the report read): one
    verify.finished in the fleet's log, from the verdict the check left, written once."""
    if (sup.state.get("last_verdict") or {}).get("lane") == winner:
        return
    sha = sup.fleet["lanes"][str(winner)]["verified"][-1]["sha"]
    path = sup.run_paths.fleet_check(winner, sha) / "verdict" / "t1.verdict.json"
    data = json.loads(path.read_text())
    sup.ledger.emit("verify.finished", 0, **{**data, "lane": winner, "sha": sha})


def attest_winner(sup) -> None:
    """A fleet's verified done is attested like a run's: the fleet's own check of the winning lane's commit, once (a
    restart finds it written or failed)."""
    if sup.fleet.get("attested") is None:
        attest_at_done(sup.run_paths, sup.emit, sup.say)


def write_changelog(sup, winner: int | None, why: str) -> None:
    repo = gitops.open_repo(sup.run_paths.workspace)
    message = f"nightshift: fleet {sup.run_paths.run_id}: lanes recorded"
    if repo.head.commit.message.startswith(message):  # written before a crash
        return
    rows = [{**r, "outcome": "won" if r["lane"] == winner else r["outcome"]} for r in sup.rows()]
    finish.record_lanes(sup.run_paths.workspace, finish.lanes_section(rows, winner, why), message)


def stop_fleet(sup) -> None:
    for lane in sup.live_lanes():
        watch.tell(lane_run(lane), "stop")
    sup.emit("run.finished", outcome="stopped", reason="stopped by the user; every lane is kept on its branch")


def lanes_order(fleet: dict[str, Any], k: int) -> tuple[int, int]:
    """When the fleet verified the lane (its lane.ended event's place in the log): the first verified wins."""
    return (fleet["lanes"][str(k)].get("ended_seq") or 0, k)
