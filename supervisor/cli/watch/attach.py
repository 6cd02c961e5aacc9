"""`nightshift attach`: the agent of a `nightshift submit` chain lives in a tmux server on whichever compute node
runs the chain now (reached through srun); any other run is attached from the target its backend recorded."""
from __future__ import annotations

from nightshift.supervisor.backends.attach import attach_argv as target_attach_argv
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state


def attach_argv(run: RunPaths) -> list[str] | None:
    from nightshift.hpc.chain import has_chain

    if load_state(run.root)[0]["phase"] != "finished" and has_chain(run):
        from nightshift.hpc.chain import attach_argv as chain_attach_argv
        from nightshift.hpc.client import make_client
        from nightshift.supervisor.shift.launcher import frozen_config
        return chain_attach_argv(run, make_client(frozen_config(run).slurm.client))
    return target_attach_argv(run)
