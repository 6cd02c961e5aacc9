"""nightshift's headless core, in rooms whose arrows point one way (each room's docstring names what it may
import, and tests/test_layers.py holds every module to it):

    cli/       the face: CLI verbs, init, doctor, demo; the composition root (wires hpc/ in, starts tui/)
    fleet/     several lanes (runs in their own worktrees) on one goal, each claim re-verified, the best kept
    shift/     the shift state machine, turns and prompts, the hooks' channel to the agent, launching a run
    sandbox/   the boundary: the one namespace (bubblewrap) around every process of the agent and its code
    attest/    a verified result anyone can check: the signed in-toto attestation of a verdict, and its check
    verify/    the verdict: the check pipeline, plan / notes / test checks, oracle/, judge/
    agents/    how each agent is started, stops, claims and costs (claude, command, demo)
    backends/  where a turn runs (tmux, local; Slurm's is registered by the face from hpc/)
    run/       the run directory contract: paths, events, the state fold, registry, liveness, inbox, watching
    config/    the nightshift.toml schema, every section of it, with errors that name the key and line

Leaf modules any room may use: errors (the one-line user error), gitops (the workspace's git), gitguard (what
nightshift's git never runs: hooks, drivers, pagers), resources
(templates), pricing (model list prices), version (nightshift's version and source commit).

May import: nothing (the package itself holds only this map).
"""
