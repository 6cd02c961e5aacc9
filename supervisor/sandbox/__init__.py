"""The boundary: the one place that makes a namespace (bubblewrap; where none can be made, Landlock and seccomp) for
any process that runs code the agent wrote or
started: the agent's turn, the test and verify commands, the oracle command, the preflight's runs of them. Callers say
what the process is; this room knows what it may see (held-out references and nightshift's private stores do not
exist), write (the workspace and a private TMPDIR; references, passed tests, nightshift.toml and .nightshift/ are
read-only), reach (the network, or only the model's API through a proxy) and how long it may live (a PID namespace:
nothing it starts outlives it; what was left running is named).

    probe.py     can bubblewrap make a namespace here, and which sandbox parts (userns, seccomp, landlock) it gives
    hardening.py what makes the namespace a sandbox: capabilities, /dev, sockets, credentials, environment
    seccomp.py   the seccomp filter (libseccomp), compiled once, read by bwrap from a descriptor
    surfaces.py  the probes of every surface, run inside the namespace
    survey.py    the probes run in a boundary's namespace, a line per surface (doctor, check, tests)
    mounts.py    a Namespace (what is hidden, read-only, writable) -> bwrap's argv; the Landlock launcher
    boundary.py  a run's Boundary: what every process of the agent's code may see, from the config
    command.py   a command (tests, verify, oracle, probe) in its namespace: argv, fresh TMPDIR, leftovers
    turn.py      an agent turn's namespace, as the lines of the turn's wrapper script
    proxy.py     the model's API reached from a namespace without network (a unix socket bound in)
    tier.py      the boundary's tier (full, landlock, seccomp, off): the strongest the machine gives, decided here only
    diagnose.py  why no namespace: the cause (sysctl, AppArmor, container, no bubblewrap) and its fix
    confinement.py  the tiers without a namespace: a Namespace as Landlock rules and the seccomp program
    confine.py   their launcher: Landlock, seccomp, no capability, then exec (standard library only)

May import: errors, gitguard, config, run.
"""
