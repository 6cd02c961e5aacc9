"""Slurm: the client interface and its two clients (the sbatch/squeue/sacct/scontrol CLI, and pyslurm where it
matches the cluster), batch-script rendering, batched job polling, the backend that runs each turn as a batch
job, and `nightshift submit`'s self-continuing chain (of one run, or of a fleet: hence fleet below), and the
job array a fleet's lanes start with. It implements the core's backend interface and is wired in by the face
(supervisor/cli); the core never imports it.

May import: errors, resources, config, run, backends, shift, fleet.
"""
