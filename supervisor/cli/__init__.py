"""The face: the `nightshift` verbs, init, doctor, demo, compare, plot, report and wait. Parses, composes,
prints. It is the composition root: it registers hpc/'s Slurm backend with the core and starts tui/, handing it
what it needs.

May import: errors, gitguard, gitops, resources, pricing, config, run, sandbox, verify, attest, agents, backends,
shift, fleet, hpc, tui.
"""
