#!/usr/bin/env bash
# zsh: the completion script `nightshift completion zsh` prints is checked with `zsh -n` (tests/test_cli_conventions.py).
. "$(dirname "$0")/apt.sh"
if ! command -v zsh >/dev/null; then
  apt_install zsh || exit 1
fi
echo "tools: zsh $(zsh --version 2>/dev/null | cut -d' ' -f2)"
