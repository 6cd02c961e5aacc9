"""The preflight: `nightshift check`, and what `run` and `submit` check before they detach; one screen, each line
ok, a note, or FAIL with its fix.

    check.py      the verb, and the preflight `run`/`submit` take (recorded into the run)
    screen.py     the lines in order, and their exit status
    lines.py      the vocabulary: a Line each (ok, note, FAIL with its fix, skip)
    workspace.py  the config, the Definition of done, the test command and the ratchet's starting set
    agent.py      the agent's CLI, version, credentials, a first turn
    boundary.py   the namespace probed from inside, for the agent that will run
    oracle.py     references unchanged, the oracle command run once, the comparisons calibrated

May import: errors, gitguard, gitops, config, run, sandbox, verify, agents, backends, shift, hpc, cli.preflight,
cli.init, cli.watch, cli.doctor, cli.progress.
"""
