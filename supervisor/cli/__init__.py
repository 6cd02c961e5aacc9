"""The face: what nightshift can be asked to do. Parses, composes, prints. It is the composition root: it registers
hpc/'s Slurm backend with the core and starts tui/, handing it what it needs. By verb family:

    init/        `init`: a workspace, its references, its held-out exam
    preflight/   `check`, and what `run`/`submit` check before they detach
    report/      `report`: the morning report
    watch/       `status`, `wait`, `ls`/`forget`, `stop`, `attach`, `resume --dead` and the watchdog
    main.py      the verbs and their options; verbs.py the run-management verbs (run, resume, log, pause, nudge,
                 claim, ...); release_verb.py `release` (a person lets a test go from the ratchet);
                 oracle_verbs.py `compare`/`plot`; attest_verbs.py `attest`/`verify-result`; doctor.py, demo.py;
                 tui_seams.py what the TUI is handed

Each group's docstring says what it may import (tests/test_layers.py holds them to it).

May import: errors, gitguard, gitops, resources, pricing, version, config, run, sandbox, verify, attest, agents, backends,
shift, fleet, hpc, tui.
"""
