"""The argv that attaches a terminal to a run's agent: tmux attach on the login node, or through srun on the
compute node for a Slurm run (the backend records that argv in the target)."""
from __future__ import annotations

from supervisor.paths import RunPaths
from supervisor.state import load_state


def attach_argv(run: RunPaths) -> list[str] | None:
    state, _, _ = load_state(run.root)
    target = state.get("target") or {}
    if state["phase"] == "finished":
        return None
    from hpc.chain import has_chain
    if has_chain(run):  # the agent is in a tmux server on whichever compute node runs the chain now
        from hpc.chain import attach_argv as chain_attach_argv
        from hpc.client import make_client
        from supervisor.launcher import frozen_config
        return chain_attach_argv(run, make_client(frozen_config(run).slurm.client))
    if target.get("attach"):
        return list(target["attach"])
    if target.get("backend") == "tmux":
        return ["tmux", "-L", target["socket"], "attach", "-t", f"{target['session']}:{target['window']}"]
    return None
