#!/usr/bin/env bash
# bubblewrap and socat: what Claude Code's sandbox needs on Linux to hold the agent's shell (nightshift's boundary).
. "$(dirname "$0")/apt.sh"
if ! command -v bwrap >/dev/null || ! command -v socat >/dev/null; then
  apt_install bubblewrap socat || exit 1
fi
echo "tools: bubblewrap $(bwrap --version 2>/dev/null | cut -d' ' -f2), socat $(socat -V 2>/dev/null | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
