#!/usr/bin/env bash
. "$(dirname "$0")/apt.sh"
command -v git >/dev/null || apt_install git || exit 1
echo "tools: $(git --version)"
