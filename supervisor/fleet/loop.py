"""The fleet's supervisor: starts each lane's own supervisor (an ordinary run in its worktree, detached in its
own tmux server), watches the lanes through their run directories, re-verifies every claim of done itself,
retires stalled lanes (and forks a fresh one from the best commit), keeps one fleet-wide budget, and at the end
merges the winner and records every lane. Each step is recorded before it is acted on, and every decision is
made from the event logs, so a supervisor killed at any moment resumes without launching a lane twice or
counting a verdict twice.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import git

from nightshift.supervisor import gitops
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.fleet import ending, finish, lanes_watch as watch
from nightshift.supervisor.fleet.array import first_turns_as_array
from nightshift.supervisor.fleet.lanes import branch_for, failed_page, lanes_dir, make_lane
from nightshift.supervisor.fleet.release import release_fleet, releases
from nightshift.supervisor.fleet.reverify import reverify
from nightshift.supervisor.fleet.state import apply_fleet, best_shown, empty_fleet, heldout_names, lane_run, shown
from nightshift.supervisor.run import inbox
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.shift.ledger import RunLedger
from nightshift.supervisor.shift.launcher import start_detached
from nightshift.supervisor.shift.ratchet import start_ratchet

POLL_SECONDS = 1.0
ENDED = ("ended",)


class FleetSupervisor:
    def __init__(self, run: RunPaths, config: Config, say=print):
        self.run_paths, self.config, self.say = run, config, say
        self.ledger = RunLedger(run)
        self.fleet = empty_fleet()
        self.stop_requested = False

    @property
    def state(self) -> dict[str, Any]:
        return self.ledger.state

    def emit(self, type_: str, **data: Any) -> dict[str, Any]:
        event = self.ledger.emit(type_, None, **data)
        apply_fleet(self.fleet, event)
        return event

    def run(self) -> int:
        for warning in self.ledger.open():
            self.say(f"warning: {warning}")
        try:
            for event in read_events(self.run_paths.events).events:
                apply_fleet(self.fleet, event)
            if self.state["phase"] == "finished":
                self.say(f"run {self.run_paths.run_id} has already finished ({self.state['outcome']})")
                return 0 if self.state["outcome"] == "done" else 1
            self.emit("supervisor.started", pid=os.getpid(), phase="fleet")
            if not self.fleet["planned"]:
                self.plan()
            while self.state["phase"] != "finished":
                self.step()
                if self.state["phase"] != "finished":
                    time.sleep(POLL_SECONDS)
            return 0 if self.state["outcome"] == "done" else 1
        finally:
            self.ledger.close()
            if self.state.get("phase") == "finished" and self.config.backend.kind == "tmux" \
                    and not self.config.backend.tmux_socket:  # a socket of the user's own is not ours to end
                # A detached fleet supervisor lives in the run's tmux server (start_detached): it goes with the run.
                # Last, as for one lane (shift/loop.py end_backend).
                from nightshift.supervisor.backends.base import socket_for
                subprocess.run(["tmux", "-L", socket_for(self.run_paths.run_id), "kill-server"], capture_output=True,
                               check=False)

    # ----- planning -------------------------------------------------------------------------------
    def created(self) -> dict[str, Any]:
        first = read_events(self.run_paths.events).events
        return {e["type"]: e["data"] for e in first[:3]}

    def plan(self) -> None:
        ws, cfg = self.run_paths.workspace, self.config
        head = self.created()
        base, branch = head["run.created"]["base"], head.get("workspace.recorded", {}).get("branch")
        if cfg.oracle is not None and cfg.oracle.compare:  # the fleet's own copies: its checks use them
            from nightshift.supervisor.verify.oracle import protect_references
            seeded = ws / ".nightshift" / "references"
            if seeded.is_dir() and not self.run_paths.references.exists():
                shutil.copytree(seeded, self.run_paths.references)
            protect_references(cfg.oracle, ws, self.run_paths.references)
        # The ratchet's starting set (unless the preflight took it), handed to every lane; the files it keeps
        problem = start_ratchet(self.run_paths, cfg, self.state, lambda kind, _shift, **data: self.emit(kind, **data),
                                self.say)
        if problem:
            self.emit("run.finished", outcome="failed", reason=problem)
            self.say(f"run failed: {problem}")
            return
        lanes, approaches = cfg.fleet.lanes, list(cfg.fleet.approaches)
        self.emit("fleet.planned", lanes=lanes, select=cfg.fleet.select, approaches=approaches, base=base,
                  branch=branch, deadline=cfg.fleet.deadline, fork_on_stall=cfg.fleet.fork_on_stall)
        approaches += [""] * (lanes - len(approaches))
        for k in range(1, lanes + 1):
            self.plan_lane(k, approaches[k - 1], base, [a for j, a in enumerate(approaches, 1) if j != k])
        self.write_failed_page()

    def plan_lane(self, k: int, approach: str, start: str, others: list[str], forked_from: int | None = None) -> None:
        rid = self.run_paths.run_id
        self.emit("lane.planned", lane=k, branch=branch_for(rid, k), run_id=f"{rid}-l{k}", approach=approach,
                  worktree=str(lanes_dir(self.run_paths.workspace, rid) / f"lane-{k}"), start=start, others=others,
                  fleet_id=rid, fork=forked_from is not None, forked_from=forked_from or None)

    # ----- one pass over the lanes ----------------------------------------------------------------
    def step(self) -> None:
        self.tick()
        if self.stop_requested:
            return ending.stop_fleet(self)
        if self.fleet["decided"]:
            return ending.conclude(self)
        if self.config.backend.kind == "slurm" and not first_turns_as_array(self):
            return  # the lanes' first turns go out as one job array: no lane starts before it is submitted
        for key, lane in sorted(self.fleet["lanes"].items(), key=lambda kv: int(kv[0])):
            if lane["status"] not in ENDED:
                self.watch_lane(int(key), lane)
        if not self.state["paused"]:
            self.keep_budget()
        ending.decide(self)

    def tick(self) -> None:
        self.ledger.beat()
        for command in self.ledger.take_commands():
            try:
                self.handle(command)
            finally:
                inbox.done_with(command)

    def handle(self, command: dict[str, Any]) -> None:
        verb, cid = command.get("verb"), command.get("id")
        if verb == "stop":
            self.emit("command.accepted", id=cid, verb=verb)
            self.stop_requested = True
        elif verb == "release":  # a person lets tests go from every lane's ratchet
            release_fleet(self, command)
        elif verb in ("pause", "resume") and self.state["paused"] == (verb == "resume"):
            self.emit("command.accepted", id=cid, verb=verb)
            for lane in self.live_lanes():
                watch.tell(lane_run(lane), verb)
            if verb == "pause":
                self.emit("run.paused", reason="paused by the user", kind="user")
            else:
                self.emit("run.resumed", by="user", reset_breaker=False)
        else:
            self.emit("command.rejected", id=cid, verb=verb,
                      reason=f"{verb!r} is not for a fleet now; nudge, approve or deny a lane by its run id "
                             f"(`nightshift status {self.run_paths.run_id}` lists them)")

    def live_lanes(self) -> list[dict[str, Any]]:
        return [lane for lane in self.fleet["lanes"].values() if lane["status"] not in ENDED]

    def create_lane(self, k: int, lane: dict[str, Any]) -> bool:
        """Make a planned lane's worktree and run; False when it cannot be (it is ended, named)."""
        most = self.config.fleet.lanes + self.config.fleet.max_forks
        siblings = [lanes_dir(self.run_paths.workspace, self.run_paths.run_id) / f"lane-{j}"
                    for j in range(1, max(most, k) + 1) if j != k]
        try:
            baseline = next((e["data"] for e in read_events(self.run_paths.events).events
                             if e["type"] == "tests.baseline"), None)
            make_lane(self.run_paths.workspace, self.config, lane, siblings, baseline, releases(self.run_paths.events))
        except (UserError, git.GitCommandError) as exc:  # this lane cannot be; the others go on
            said = " ".join(str(getattr(exc, "stderr", "") or exc).replace("stderr:", "").split())[:300]
            self.emit("lane.ended", lane=k, outcome="failed", reason=f"could not be made: {said}",
                      cheats=[], metric=None, cost_usd=0.0)
            return False
        self.emit("lane.created", lane=k)
        self.write_failed_page()
        return True

    def watch_lane(self, k: int, lane: dict[str, Any]) -> None:
        if lane["status"] == "planned" and not self.create_lane(k, lane):
            return
        run = lane_run(lane)
        state = watch.lane_state(run)
        if state["phase"] == "finished":
            return self.lane_finished(k, lane, run, state)
        if state["paused"] and state.get("pause_kind") == "breaker":
            return self.retire(k, lane, run, state)
        if state["paused"] and state.get("pause_kind") == "budget" and not self.state["paused"]:
            watch.tell(run, "stop")
            return self.end_lane(k, run, state, "spent", state.get("pause_reason") or "its own limits are spent")
        if not watch.supervised(run):
            try:
                where = start_detached(run)
            except UserError as exc:  # its supervisor cannot start (its log says why): the lane ends, named
                return self.end_lane(k, run, state, "failed", f"its supervisor did not start: {exc}")
            self.emit("lane.started", lane=k, where=where)
            self.say(f"lane {k}: supervised in {where}")

    def lane_finished(self, k: int, lane: dict[str, Any], run: RunPaths, state: dict[str, Any]) -> None:
        if state["outcome"] != "done":
            return self.end_lane(k, run, state, "failed" if state["outcome"] == "failed" else "stopped",
                                 state.get("finish_reason") or "")
        repo = gitops.open_repo(self.run_paths.workspace)
        sha = repo.git.rev_parse(lane["branch"])
        if not any(v["sha"] == sha for v in lane["verified"]):
            self.say(f"lane {k}: claims done at {sha[:10]}; checking it in a clean checkout")
            verdict, exam = reverify(self.run_paths, self.config, k, sha, run, self.fleet["planned"]["base"])
            cheats = sorted(set(watch.lane_cheats(run)) | set(cheats_from(verdict)))
            held = heldout_names(self.config)
            ranked = [x for x in (verdict.metric, (exam or {}).get("worst")) if x is not None]
            self.emit("lane.verified", lane=k, sha=sha, passed=verdict.passed, metric=max(ranked) if ranked else None,
                      shown=shown(verdict.metrics, held),
                      heldout=None if exam is None else "pass" if exam["passed"] else "fail",
                      metrics=verdict.metrics, cost_usd=state["cost_usd"], summary=verdict.summary[:1500],
                      cheats=cheats)
        last = self.fleet["lanes"][str(k)]["verified"][-1]
        if not last["passed"]:
            outcome = "cheated" if last["cheats"] else "failed"
            return self.end_lane(k, run, state, outcome, f"the fleet's check of {sha[:10]}: {last['summary'][:300]}",
                                 metric=last["metric"], shown_metric=last["shown"])
        self.say(f"lane {k}: verified by the fleet ({last['summary'][:120]})")
        self.emit("lane.ended", lane=k, outcome="verified", reason="verified by the fleet", metric=last["metric"],
                  shown=last["shown"], cost_usd=state["cost_usd"], cheats=[])

    def end_lane(self, k: int, run: RunPaths, state: dict[str, Any], outcome: str, reason: str,
                 metric: float | None = None, shown_metric: float | None = None) -> None:
        cheats = watch.lane_cheats(run)
        if cheats and outcome in ("failed", "retired", "spent"):
            outcome = "cheated"
        metric = state.get("best_metric") if metric is None else metric
        seen = best_shown(state, heldout_names(self.config)) if shown_metric is None else shown_metric
        if outcome == "cheated" or (metric is not None and not math.isfinite(metric)):
            metric = seen = None  # a copied answer's zero error is no number to rank by; no number is no number
        self.emit("lane.ended", lane=k, outcome=outcome, reason=reason[:500], cheats=cheats[:10], metric=metric,
                  shown=seen, cost_usd=state["cost_usd"])
        self.say(f"lane {k}: {outcome} ({reason[:120]})")
        self.write_failed_page()

    def retire(self, k: int, lane: dict[str, Any], run: RunPaths, state: dict[str, Any]) -> None:
        watch.tell(run, "stop")
        self.end_lane(k, run, state, "retired", state.get("pause_reason") or "its breaker tripped")
        forks = sum(1 for x in self.fleet["lanes"].values() if x.get("fork"))
        if not self.config.fleet.fork_on_stall or forks >= self.config.fleet.max_forks:
            return
        best = self.best_commit()
        n = max(map(int, self.fleet["lanes"])) + 1
        others = [x["approach"] for x in self.fleet["lanes"].values() if x["approach"]]
        self.plan_lane(n, "", best[1], others, forked_from=best[0])
        self.say(f"lane {n}: forked from {f'lane {best[0]}' if best[0] else 'the base'} at {best[1][:10]} "
                 f"(lane {k} stalled)")

    def best_commit(self) -> tuple[int, str]:
        """(lane, commit) with the lowest error any lane's honest verdicts reached; (0, base) when none did."""
        found = []
        for key, lane in self.fleet["lanes"].items():
            best = watch.best_commit(lane_run(lane)) if lane["status"] != "planned" else None
            if best:
                found.append((best[0], int(key), best[1]))
        if not found:
            return 0, self.fleet["planned"]["base"]
        _, k, sha = min(found)
        return k, sha

    def write_failed_page(self) -> None:
        text = finish.failed_page_text(self.rows())
        for lane in self.fleet["lanes"].values():
            page = failed_page(Path(lane["worktree"]))
            if page.parent.is_dir():  # the lane's .nightshift/ exists once its run does
                tmp = page.with_name(".failed-approaches.tmp")
                tmp.write_text(text)
                os.replace(tmp, page)

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for key, lane in self.fleet["lanes"].items():
            state = watch.lane_state(lane_run(lane)) if lane["status"] != "planned" else None
            out.append({"lane": int(key), "branch": lane["branch"], "approach": lane["approach"],
                        "outcome": lane["outcome"] or "running", "reason": lane["reason"],
                        "metric": lane.get("shown") if lane["status"] in ENDED else
                        best_shown(state, heldout_names(self.config)),
                        "heldout": lane["verified"][-1].get("heldout") if lane["verified"] else None,
                        "cost_usd": (state or {}).get("cost_usd", 0.0),
                        "shift": (state or {}).get("shift", 0), "cheats": lane.get("cheats") or [],
                        "forked_from": lane.get("forked_from")})
        return out

    # ----- budget, deciding, ending ---------------------------------------------------------------
    def keep_budget(self) -> None:
        from nightshift.supervisor.fleet.budget import spent_over
        over = spent_over(self.config.limits, self.rows(), self.ledger.hours_used(), self.fleet["lanes"].values())
        if over is None:
            return
        what, limit, value = over
        for lane in self.live_lanes():
            watch.tell(lane_run(lane), "pause")
        self.emit("budget.exceeded", what=what, limit=limit, value=value)
        self.emit("run.paused", kind="budget", reason=f"the fleet's budget is spent: {what} = {value} (limit {limit}); "
                  f"raise limits.{what} in {self.run_paths.config} and `nightshift resume {self.run_paths.run_id}`")
        self.say(f"fleet paused: {what} = {value} (limit {limit})")


def cheats_from(verdict) -> list[str]:
    from nightshift.supervisor.fleet.reverify import cheats_in
    return cheats_in([c.to_dict() for c in verdict.checks])
