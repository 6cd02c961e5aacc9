#!/usr/bin/env bash
# Slurm (slurmctld, slurmd, CLI), munge and libslurm-dev from Debian's packages, for the single-node test cluster.
. "$(dirname "$0")/apt.sh"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || [ ! -e /usr/include/slurm/slurm.h ]; then
  apt_install slurm-wlm munge libslurm-dev || exit 1
fi
echo "tools: slurm $(slurmctld -V 2>/dev/null | cut -d" " -f2), munge $(munged --version 2>/dev/null | cut -d' ' -f1 | sed 's/munge-//')"
