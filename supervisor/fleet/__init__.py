"""The fleet: several lanes on one goal. Each lane is an ordinary supervised run (its own shifts, push-backs, lab
notes and boundary) in its own git worktree on branch ``nightshift/<run>/lane-<k>``; the fleet's supervisor
starts them, re-verifies every claim of done itself in a clean checkout of the lane's commit, keeps the winner
(merged into the run's branch) and records every other lane in the run's CHANGELOG.md with its numbers.

    state.py     the fleet's fold of its own events (lanes planned, verified, ended; the winner)
    lanes.py     planning a fleet (bad input refused first) and making a lane: worktree, branch, sub-run
    reverify.py  a lane's commit checked by the fleet in a fresh worktree, with every check and the held-out ones
    finish.py    the winner merged into the run's branch; the lanes written into CHANGELOG.md
    loop.py      the fleet's supervisor: a state machine over its event log, so a kill -9 resumes cleanly
    launch.py    `nightshift run --lanes N`: creating the fleet's run and starting its supervisor
    array.py     on Slurm, the lanes' first turns as one job array (through the backends' registry)

May import: errors, gitguard, gitops, resources, pricing, config, run, verify, agents, backends, sandbox, shift.
"""
