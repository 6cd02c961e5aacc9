#!/usr/bin/env bash
# Debian's hdf5-tools: bench/bench_oracle.py times `h5diff -p` beside nightshift compare on a 1 GiB field.
. "$(dirname "$0")/apt.sh"
command -v h5diff >/dev/null || apt_install hdf5-tools || exit 1
echo "tools: h5diff $(h5diff --version 2>/dev/null | grep -oE '[0-9]+(\.[0-9]+)+' | head -1)"
