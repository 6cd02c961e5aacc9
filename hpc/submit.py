"""`nightshift submit [DIR]`: create a run and send its whole supervision to Slurm as a self-continuing chain.

Inside the job the agent runs in a tmux server on the node (or as a child process where tmux is missing), so
`nightshift attach` can reach it through ``srun --jobid J --overlap --pty tmux ... attach``.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from hpc.chain import chain_files, submit_link, write_chain_script
from hpc.client import make_client
from hpc.errors import SlurmError, SubmitRejected


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


__all__ = ["submit_main", "submit_run", "chain_files"]
