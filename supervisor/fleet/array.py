"""On Slurm, the lanes that start together send their first turns as ONE job array (hpc/array.py, reached through
the backends' registry: the core never imports hpc/): one sbatch
and one record for the controller to schedule instead of one per lane. Each lane's own supervisor takes its task
for its first turn instead of submitting a job, and continues with ordinary jobs afterwards. Lanes forked later
start alone, with their own jobs.

Recorded before acted on, so a fleet supervisor killed at any moment neither submits the array twice nor loses
it: ``fleet.array_submitting`` (the lanes and the array's deterministic job name) before sbatch,
``fleet.array_submitted`` (its job id) after; a restart between the two finds the live array by its name.
The offers are written after that (idempotent), and only then are the lanes' supervisors started.
"""
from __future__ import annotations

from typing import Any

from nightshift.supervisor import backends
from nightshift.supervisor.fleet.state import lane_run


def first_turns_as_array(fleet_sup) -> bool:
    """True when the lanes may be watched (and started) now: the array is submitted and offered, or none is to be
    sent. False holds the lanes back for this step (the controller did not answer; tried again next step)."""
    fleet, arrays = fleet_sup.fleet, backends.job_arrays(fleet_sup.config.backend.kind)
    if arrays is None:
        return True
    if fleet.get("array") is None and fleet.get("array_intent") is None:
        lanes = _starting_together(fleet_sup)
        if len(lanes) < 2 or not arrays.usable(fleet_sup.config):
            return True  # one lane (or a client that cannot see array tasks): its own job, as for any run
        fleet_sup.emit("fleet.array_submitting", name=arrays.array_name(fleet_sup.run_paths.run_id), lanes=lanes)
        fleet_sup.array_fresh = True  # recorded by this supervisor: no earlier one can have submitted it
    if fleet.get("array") is None and not _submit(fleet_sup, arrays, look=not getattr(fleet_sup, "array_fresh", 0)):
        return False
    done = fleet["array"]
    if done.get("job_id") is not None:
        for task, k in enumerate(done["lanes"]):
            lane = fleet["lanes"][str(k)]
            if lane["status"] == "created":  # not started: its supervisor takes the offer at its first turn
                arrays.offer(lane_run(lane).root, fleet_sup.run_paths.root, done["job_id"], task)
    return True


def _starting_together(fleet_sup) -> list[int]:
    """The lanes of the fleet's first start (none started yet), each made now; [] once any lane has started."""
    lanes = fleet_sup.fleet["lanes"]
    if any(lane["starts"] for lane in lanes.values()):
        return []
    ready = []
    for key, lane in sorted(lanes.items(), key=lambda kv: int(kv[0])):
        if lane["status"] == "planned" and not fleet_sup.create_lane(int(key), lane):
            continue
        if lane["status"] == "created":
            ready.append(int(key))
    return ready


def _submit(fleet_sup, arrays, look: bool) -> bool:
    """Find (``look``: recorded by an earlier supervisor, which may have submitted it before it died) or submit
    the array recorded in ``fleet.array_submitting``; False to try again at the next step."""
    intent: dict[str, Any] = fleet_sup.fleet["array_intent"]
    lanes = intent["lanes"]
    roots = [lane_run(fleet_sup.fleet["lanes"][str(k)]).root for k in lanes]
    got = arrays.submit(fleet_sup.config, fleet_sup.run_paths, roots, look)
    if "wait" in got:
        fleet_sup.say(f"fleet: slurmctld does not answer ({got['wait']}); the lanes wait for their job array")
        return False
    if "refused" in got:
        return _refused(fleet_sup, intent, got["refused"])
    job_id = got["job_id"]
    fleet_sup.emit("fleet.array_submitted", job_id=job_id, name=intent["name"], lanes=lanes,
                   found=bool(got.get("found")), tasks={str(k): f"{job_id}_{t}" for t, k in enumerate(lanes)})
    fleet_sup.say(f"fleet: the first turns of lanes {', '.join(map(str, lanes))} went out as job array {job_id} "
                  f"(tasks {job_id}_0..{job_id}_{len(lanes) - 1})")
    return True


def _refused(fleet_sup, intent: dict[str, Any], words: str) -> bool:
    """Slurm refused the array (its words kept): the lanes' own jobs ask for the same [slurm] resources and would
    be refused too (each lane's supervisor dying at its first sbatch), so the fleet ends here, saying what to fix."""
    reason = (f"Slurm refused the lanes' job array: {words}; fix [slurm] in {fleet_sup.run_paths.workspace}/"
              f"nightshift.toml (`nightshift doctor --slurm` checks it) and run again")
    fleet_sup.emit("fleet.array_submitted", job_id=None, name=intent["name"], lanes=intent["lanes"],
                   refused=words[:500])
    for k in intent["lanes"]:
        fleet_sup.emit("lane.ended", lane=k, outcome="failed", reason=reason[:500], cheats=[], metric=None,
                       cost_usd=0.0)
    fleet_sup.emit("run.finished", outcome="failed", reason=reason[:1000])
    fleet_sup.say(f"fleet: {reason}")
    return False
