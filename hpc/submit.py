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

from hpc.chain import chain_files, chain_job, submit_link, write_chain_script
from hpc.client import make_client
from hpc.errors import SlurmError, SubmitRejected
from hpc.script import render_script


def submit_run(workspace: Path, backend: str | None = None, on_created=None) -> tuple[str, int]:
    """Create the run and queue the first job of its chain; (run id, job id). ``on_created(run)`` is called
    once the run exists, before its job is queued (the face records the preflight there)."""
    from supervisor.shift.launcher import create_run, finish_unsupervised, resolve_config

    backend = backend or ("tmux" if shutil.which("tmux") else "local")
    config = resolve_config(workspace, backend=backend)
    client = make_client(config.slurm.client)  # fails early, before a run exists, when Slurm is missing
    run = create_run(workspace, config)
    if on_created is not None:
        on_created(run)
    write_chain_script(run, config.slurm)
    try:
        return run.run_id, submit_link(run, client, by="nightshift submit")
    except SlurmError as exc:  # the run stays on record, ended with Slurm's own words
        finish_unsupervised(run, "failed", f"Slurm did not take the first job: {exc}")
        raise


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
    from supervisor.run.paths import RunPaths, new_run_id
    from supervisor.shift.launcher import resolve_config

    workspace = Path(workspace).expanduser().resolve()
    backend = backend or ("tmux" if shutil.which("tmux") else "local")
    config = resolve_config(workspace, backend=backend)
    run = RunPaths.for_run(workspace, new_run_id())  # not created: a preview leaves no trace
    script = render_script(config.slurm, chain_job(run))
    settings = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    return SubmitPlan(workspace, run.run_id, backend, settings, script)


def submit_plan(plan: SubmitPlan) -> tuple[str, int]:
    """Send what the plan showed. Slurm checks the script first (``sbatch --test-only`` queues nothing), so a
    refusal (a partition or account the cluster refuses) creates no run; sbatch's words come back verbatim."""
    from supervisor.shift.launcher import create_run, finish_unsupervised, resolve_config

    config = resolve_config(plan.workspace, backend=plan.backend)
    if render_script(config.slurm, chain_job(_paths(plan))) != plan.script:
        raise SlurmError("nightshift.toml changed since the preview; look at the new script, then submit again")
    client = make_client(config.slurm.client)
    check = getattr(client, "check", None)  # the CLI client; pyslurm has no dry run
    if check is not None:
        with tempfile.TemporaryDirectory(prefix="nightshift-check-") as tmp:
            script = Path(tmp) / "first-job.sbatch"
            script.write_text(plan.script)
            check(script)
    run = create_run(plan.workspace, config, run_id=plan.run_id)
    write_chain_script(run, config.slurm)
    try:
        return run.run_id, submit_link(run, client, by="nightshift tui (submit form)")
    except SlurmError as exc:  # refused after the check passed (the cluster changed): the run says so
        finish_unsupervised(run, "failed", f"Slurm did not take the first job: {exc}")
        raise


def _paths(plan: SubmitPlan):
    from supervisor.run.paths import RunPaths

    return RunPaths.for_run(plan.workspace, plan.run_id)


def submit_main(workspace: Path, backend: str | None = None, on_created=None) -> int:
    try:
        run_id, job_id = submit_run(Path(workspace), backend, on_created)
    except SubmitRejected as exc:  # Slurm's words verbatim, then where the request comes from
        print(f"nightshift: {exc} (the request comes from [slurm] in nightshift.toml)", file=sys.stderr)
        return 2
    except SlurmError as exc:
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2
    print(f"run {run_id}: submitted as Slurm job {job_id}; it continues itself across walltime limits.\n"
          f"  follow: nightshift log -f {run_id}    stop: nightshift stop {run_id}    "
          f"attach: nightshift attach {run_id}")
    return 0


__all__ = ["submit_main", "submit_run", "plan_submit", "submit_plan", "SubmitPlan", "chain_files"]
