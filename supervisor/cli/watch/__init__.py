"""Watching and steering runs that live on without you: where a run stands, its outcome for scripts, the list of
your runs, stopping one, attaching to its agent, and the watchdog that resumes runs whose supervisor died.

    status.py    `nightshift status RUN [--json]`
    outcome.py   a run's outcome and the exit codes of `wait` and `run --foreground`
    registry.py  `nightshift ls` and `forget`
    stop.py      `nightshift stop` (and the TUI's stop key): a submitted chain's queued jobs first
    attach.py    `nightshift attach` to the agent's pane, here or on a compute node
    heldout.py   the user's view of a run's held-out exam (status, log, the report)
    revive.py    `nightshift resume --dead`
    cron.py      the watchdog as a crontab line
    systemd.py   the watchdog as a systemd user timer

May import: errors, config, run, backends, shift, fleet, hpc, cli.watch.
"""
