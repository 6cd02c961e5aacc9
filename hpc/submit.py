"""`nightshift submit [DIR]`: create a run and send its whole supervision to Slurm as a self-continuing chain.

Inside the job the agent runs in a tmux server on the node (or as a child process where tmux is missing), so
`nightshift attach` can reach it through ``srun --jobid J --overlap --pty tmux ... attach``.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nightshift.hpc.chain import chain_files, chain_job, submit_link, write_chain_script
from nightshift.hpc.client import make_client
from nightshift.hpc.errors import SlurmError, SubmitRejected
from nightshift.hpc.script import render_script


def submit_run(workspace: Path, backend: str | None = None, on_created=None,
               lanes: int | None = None) -> tuple[str, int]:
    """Create the run and queue the first job of its chain; (run id, job id). ``on_created(run)`` is called
    once the run exists, before its job is queued (the face records the preflight there). A fleet ([fleet]
    lanes > 1, or ``lanes``) is submitted the same way: the chain's jobs run the fleet's supervisor, which runs
    its lanes inside the job."""
    config = submit_config(workspace, backend, lanes)
    client = make_client(config.slurm.client)  # fails early, before a run exists, when Slurm is missing
    return _queue_chain(workspace, config, client, by="nightshift submit", on_created=on_created)


def submit_config(workspace: Path, backend: str | None = None, lanes: int | None = None):
    """The config a submit runs with; a fleet that cannot start is refused here (one line), before anything."""
    from nightshift.supervisor.fleet.launch import is_fleet, refuse_fleet_now, with_lanes
    from nightshift.supervisor.shift.launcher import resolve_config

    config = with_lanes(resolve_config(workspace, backend=_backend(backend)), lanes)
    if is_fleet(config):
        refuse_fleet_now(Path(workspace), config)
    return config


@dataclass(frozen=True)
class SubmitPlan:
    """What a submit will send, shown before it is sent (the TUI's submit form)."""

    workspace: Path
    run_id: str  # the id the run will get: its paths are in the script
    backend: str
    settings: list[str]  # the #SBATCH lines
    script: str  # the whole batch script, exactly as it will be submitted


def plan_submit(workspace: Path, backend: str | None = None) -> SubmitPlan:
    """Render the first job of a run's chain from nightshift.toml without creating anything."""
    from nightshift.supervisor.run.paths import new_run_id
    from nightshift.supervisor.shift.launcher import resolve_config

    workspace = Path(workspace).expanduser().resolve()
    backend = _backend(backend)
    config = resolve_config(workspace, backend=backend)
    run_id = new_run_id()  # the run is not created: a preview leaves no trace
    script = render_script(config.slurm, chain_job(_paths(workspace, run_id)))
    settings = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    return SubmitPlan(workspace, run_id, backend, settings, script)


def submit_plan(plan: SubmitPlan) -> tuple[str, int]:
    """Send what the plan showed. Slurm checks the script first (``sbatch --test-only`` queues nothing), so a
    refusal (a partition or account the cluster refuses) creates no run; sbatch's words come back verbatim."""
    from nightshift.supervisor.shift.launcher import resolve_config

    config = resolve_config(plan.workspace, backend=plan.backend)
    if render_script(config.slurm, chain_job(_paths(plan.workspace, plan.run_id))) != plan.script:
        raise SlurmError("nightshift.toml changed since the preview; look at the new script, then submit again")
    client = make_client(config.slurm.client)
    check = getattr(client, "check", None)  # the CLI client; pyslurm has no dry run
    if check is not None:
        with tempfile.TemporaryDirectory(prefix="nightshift-check-") as tmp:
            script = Path(tmp) / "first-job.sbatch"
            script.write_text(plan.script)
            check(script)
    return _queue_chain(plan.workspace, config, client, by="nightshift tui (submit form)", run_id=plan.run_id)


def _queue_chain(workspace: Path, config, client, by: str, run_id: str | None = None,
                 on_created=None) -> tuple[str, int]:
    """What both ways of submitting share: create the run, write its chain's script, queue the first job. A
    refusal after the run exists (no check before it, or the cluster changed since) ends the run on record, with
    Slurm's own words."""
    from nightshift.supervisor.fleet.launch import create_fleet, is_fleet
    from nightshift.supervisor.shift.launcher import create_run, finish_unsupervised

    run = create_fleet(workspace, config, run_id) if is_fleet(config) else create_run(workspace, config, run_id=run_id)
    if on_created is not None:
        on_created(run)
    write_chain_script(run, config.slurm)
    try:
        return run.run_id, submit_link(run, client, by=by)
    except SlurmError as exc:
        finish_unsupervised(run, "failed", f"Slurm did not take the first job: {exc}")
        raise


def _backend(backend: str | None) -> str:
    """Where the agent runs inside the job: tmux where it is installed (so `attach` reaches it), else a child."""
    return backend or ("tmux" if shutil.which("tmux") else "local")


def _paths(workspace: Path, run_id: str):
    from nightshift.supervisor.run.paths import RunPaths

    return RunPaths.for_run(workspace, run_id)


def submit_main(workspace: Path, backend: str | None = None, on_created=None, lanes: int | None = None,
                note: str = "") -> int:
    """`nightshift submit`; ``note`` ends the start line (a fleet's word on the untracked files its lanes miss)."""
    try:
        run_id, job_id = submit_run(Path(workspace), backend, on_created, lanes=lanes)
    except SubmitRejected as exc:  # Slurm's words verbatim, then where the request comes from
        print(f"nightshift: {exc} (the request comes from [slurm] in nightshift.toml)", file=sys.stderr)
        return 2
    except SlurmError as exc:
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2
    print(f"run {run_id}: submitted as Slurm job {job_id}; it continues itself across walltime limits{note}.\n"
          f"  follow: nightshift log -f {run_id}    stop: nightshift stop {run_id}    "
          f"attach: nightshift attach {run_id}")
    return 0


__all__ = ["submit_main", "submit_run", "plan_submit", "submit_plan", "SubmitPlan", "chain_files"]
