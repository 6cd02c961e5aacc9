#!/usr/bin/env bash
# bubblewrap and socat: what Claude Code's sandbox needs on Linux to hold the agent's shell (nightshift's boundary);
# libseccomp2: the library the sandbox's seccomp filter is compiled with (through pyseccomp).
. "$(dirname "$0")/apt.sh"
if ! command -v bwrap >/dev/null || ! command -v socat >/dev/null || ! ldconfig -p | grep -q libseccomp.so.2; then
  apt_install bubblewrap socat libseccomp2 || exit 1
fi
echo "tools: bubblewrap $(bwrap --version 2>/dev/null | cut -d' ' -f2), socat $(socat -V 2>/dev/null | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
