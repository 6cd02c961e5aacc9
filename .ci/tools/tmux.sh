#!/usr/bin/env bash
. "$(dirname "$0")/apt.sh"
command -v tmux >/dev/null || apt_install tmux || exit 1
echo "tools: tmux $(tmux -V | cut -d' ' -f2)"
