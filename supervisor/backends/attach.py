"""The argv that attaches a terminal to a run's agent, from the target its backend recorded: tmux attach for a
pane on this login node, or the argv a backend stored (srun into a Slurm job's tmux server)."""
from __future__ import annotations

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state


def attach_argv(run: RunPaths) -> list[str] | None:
    state, _, _ = load_state(run.root)
    target = state.get("target") or {}
    if state["phase"] == "finished":
        return None
    if target.get("attach"):
        return list(target["attach"])
    if target.get("backend") == "tmux":
        return ["tmux", "-L", target["socket"], "attach", "-t", f"{target['session']}:{target['window']}"]
    return None
