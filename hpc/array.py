"""The first turns of a fleet's lanes as ONE Slurm job array: one ``sbatch --array=0-(N-1)``, one record in the
controller, one line per task in the poller's one query, instead of N submissions.

The fleet submits the array before any lane's supervisor runs, so a task cannot know its turn's wrapper yet (the
lane's supervisor writes it, with the shift's token and policy). Each task therefore runs a small dispatcher
(``slurm/array/task.sh`` in the fleet's run) that waits for its lane to hand over the turn, then runs the lane's
own wrapper, its output in the lane's turn log as an ordinary job's is.

The hand-over, per lane, through files in the lane's run directory (shared filesystem, as for every job):

  ``array-offer``    written by the fleet: the task this lane may take for its first turn (JSON)
  ``array-go``       written by the lane's supervisor: the wrapper and log of that turn (two lines)
  ``array-claimed``  the offer renamed by the lane's supervisor once ``array-go`` is written: the task is its own

A task that waits longer than ``OFFER_WAIT`` renames the offer to ``array-offer.expired`` and ends; a rename
succeeds once, so exactly one side wins: a lane that comes late submits an ordinary job, and no turn runs twice
or not at all.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from nightshift.hpc.interface import SlurmClient, SubmitOptions
from nightshift.hpc.script import BatchJob, ShellWord, write_script

OFFER_WAIT = 1800  # seconds a task waits for its lane's supervisor before it gives its allocation back
OFFER, GO, CLAIMED = "array-offer", "array-go", "array-claimed"


def array_name(fleet_id: str) -> str:
    """Deterministic, so a fleet supervisor restarted between submitting and recording finds its array."""
    return f"ns-{fleet_id}-array"


def array_dir(fleet_root: Path) -> Path:
    path = Path(fleet_root) / "slurm" / "array"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def task_files(fleet_root: Path, task: int) -> dict[str, str]:
    """Where task ``task`` writes its exit record, walltime mark and own output (before its lane's turn runs)."""
    d = Path(fleet_root) / "slurm" / "array"
    return {"status_file": str(d / f"task-{task}.job.json"), "signal_file": str(d / f"task-{task}.walltime"),
            "task_log": str(d / f"task-{task}.log")}


def dispatcher(lane_roots: list[Path]) -> str:
    """The script each task runs: wait for its lane's hand-over, then that turn's wrapper (or give up)."""
    cases = "".join(f"  {k}) run={shlex.quote(str(root))} ;;\n" for k, root in enumerate(lane_roots))
    return (
        "#!/bin/bash\n"
        "# nightshift: one task of a fleet's job array runs the first turn of one lane (see hpc/array.py)\n"
        'case "${SLURM_ARRAY_TASK_ID:-}" in\n'
        f"{cases}"
        '  *) echo "nightshift: array task ${SLURM_ARRAY_TASK_ID:-?} belongs to no lane" >&2; exit 3 ;;\n'
        "esac\n"
        "waited=0\n"
        f'until [ -e "$run/{CLAIMED}" ]; do\n'
        f'  if [ "$waited" -ge {OFFER_WAIT} ] && mv "$run/{OFFER}" "$run/{OFFER}.expired" 2>/dev/null; then\n'
        '    echo "nightshift: the lane did not take this task within ' f'{OFFER_WAIT}' ' s; it submits its own job"\n'
        "    exit 0\n"
        "  fi\n"
        "  sleep 1; waited=$((waited + 1))\n"
        "done\n"
        f'{{ read -r wrapper; read -r log; }} < "$run/{GO}"\n'
        'echo "nightshift: task ${SLURM_ARRAY_TASK_ID} runs $wrapper"\n'
        'exec bash "$wrapper" >> "$log" 2>&1\n'
    )


def array_job(fleet_root: Path, fleet_id: str, workdir: Path) -> BatchJob:
    d = array_dir(fleet_root)
    task = '"${SLURM_ARRAY_TASK_ID}"'
    return BatchJob(job_name=array_name(fleet_id), work=f"bash {shlex.quote(str(d / 'task.sh'))}", workdir=workdir,
                    log_file=d / "task-%a.log",  # sbatch's own pattern: %a is the task
                    status_file=ShellWord(f"{shlex.quote(str(d))}/task-{task}.job.json"),
                    signal_file=ShellWord(f"{shlex.quote(str(d))}/task-{task}.walltime"),
                    description=f"the first turns of the lanes of fleet {fleet_id}, one array task per lane")


def write_array(slurm, fleet_root: Path, fleet_id: str, workdir: Path, lane_roots: list[Path]) -> Path:
    """The dispatcher and the array's batch script (kept: exactly what was submitted); the script's path."""
    d = array_dir(fleet_root)
    tmp = d / ".task.sh.tmp"
    tmp.write_text(dispatcher(lane_roots))
    os.chmod(tmp, 0o700)
    os.replace(tmp, d / "task.sh")
    # --array in the script itself, so the kept script says all that was asked of Slurm
    config = slurm.model_copy(update={"extra": [*slurm.extra, f"--array=0-{len(lane_roots) - 1}"]})
    return write_script(config, array_job(fleet_root, fleet_id, workdir), d / "array.sbatch")


def usable(config) -> bool:
    """Array tasks are read by the CLI client (pyslurm's job list is not parsed for them): with pyslurm, each lane
    submits its own first job, as before."""
    from nightshift.hpc.client import make_client

    return make_client(config.slurm.client).kind == "cli"


def submit(config, fleet_run, lane_roots: list[Path], look: bool) -> dict[str, Any]:
    """Find (``look``: after a crash) or submit the fleet's array for these lanes, task k for lane_roots[k]:
    {"job_id": id}, {"wait": why} (the controller does not answer: try again) or {"refused": Slurm's words}."""
    from nightshift.hpc.client import make_client
    from nightshift.hpc.errors import ControllerUnavailable, SlurmError

    client = make_client(config.slurm.client)
    try:
        found = find_array(client, fleet_run.run_id) if look else None
        if found is not None:
            return {"job_id": found, "found": True}
        script = write_array(config.slurm, fleet_run.root, fleet_run.run_id, Path(fleet_run.workspace), lane_roots)
        return {"job_id": submit_array(client, script, fleet_run.run_id)}
    except ControllerUnavailable as exc:
        return {"wait": str(exc)}
    except SlurmError as exc:
        return {"refused": str(exc)}


def find_array(client: SlurmClient, fleet_id: str) -> int | None:
    """The live array of this fleet the controller knows (submitted before a crash), else None."""
    name = array_name(fleet_id)
    live = [j for j in client.query(prefix=name).values() if j.name == name and not j.terminal]
    return int(str(live[0].job_id).split("_")[0]) if live else None


def submit_array(client: SlurmClient, script: Path, fleet_id: str) -> int:
    return client.submit(script, SubmitOptions(job_name=array_name(fleet_id)))


def offer(lane_root: Path, fleet_root: Path, array_id: int, task: int, shift: int = 1, turn: int = 1) -> None:
    """Offer task ``task`` to the lane for its first turn (idempotent: a lane that took or lost it keeps that)."""
    root = Path(lane_root)
    if any((root / name).exists() for name in (OFFER, CLAIMED, f"{OFFER}.expired")):
        return
    body = {"array_id": array_id, "task": task, "job_id": f"{array_id}_{task}", "shift": shift, "turn": turn,
            **task_files(fleet_root, task)}
    tmp = root / f".{OFFER}.tmp"
    tmp.write_text(json.dumps(body))
    os.replace(tmp, root / OFFER)


# ----- the lane's side (its SlurmBackend) ------------------------------------------------------------------
def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


def claimed(lane_root: Path, shift: int, turn: int) -> dict[str, Any] | None:
    """The task this lane took for this turn, if it took one."""
    body = _read(Path(lane_root) / CLAIMED)
    return body if body and (body.get("shift"), body.get("turn")) == (shift, turn) else None


def claim(lane_root: Path, shift: int, turn: int, wrapper: Path, log: Path) -> dict[str, Any] | None:
    """Take the offered task for this turn (its wrapper written already); None when there is none to take (no
    offer, another turn's, or the task gave up): then the lane submits its own job as usual."""
    root = Path(lane_root)
    body = _read(root / OFFER)
    if not body or (body.get("shift"), body.get("turn")) != (shift, turn):
        return None
    tmp = root / f".{GO}.tmp"
    tmp.write_text(f"{wrapper}\n{log}\n")
    os.replace(tmp, root / GO)  # before the claim: a task that sees the claim reads this at once
    try:
        os.rename(root / OFFER, root / CLAIMED)
    except FileNotFoundError:  # the task gave up a moment ago
        return None
    return body
