#!/usr/bin/env bash
# MPICH (Debian: mpich, libmpich-dev): the sandbox tests run mpirun inside the namespace (MPI's own sockets in the
# private /tmp must keep working).
. "$(dirname "$0")/apt.sh"
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  apt_install mpich libmpich-dev || exit 1
fi
echo "tools: mpich $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p')"
