"""`nightshift attach`: the agent of a `nightshift submit` chain lives in a tmux server on whichever compute node
runs the chain now (reached through srun); any other run is attached from the target its backend recorded."""
from __future__ import annotations

from supervisor.backends.attach import attach_argv as target_attach_argv
from supervisor.run.paths import RunPaths
from supervisor.run.state import load_state


def attach_argv(run: RunPaths) -> list[str] | None:
    from hpc.chain import has_chain

    if load_state(run.root)[0]["phase"] != "finished" and has_chain(run):
        from hpc.chain import attach_argv as chain_attach_argv
        from hpc.client import make_client
        from supervisor.shift.launcher import frozen_config
        return chain_attach_argv(run, make_client(frozen_config(run).slurm.client))
    return target_attach_argv(run)
