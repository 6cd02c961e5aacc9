#!/usr/bin/env bash
# numdiff 5.9 (Debian package): the anchor bench/bench_oracle.py measures the oracle against.
. "$(dirname "$0")/apt.sh"
command -v numdiff >/dev/null || apt_install numdiff || exit 1
echo "tools: numdiff $(numdiff --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)"
