#!/usr/bin/env bash
# Chromium (Debian package), headless: the report tests open `nightshift report`'s HTML in it as a person would.
. "$(dirname "$0")/apt.sh"
command -v chromium >/dev/null || apt_install chromium || exit 1
echo "tools: chromium $(chromium --version 2>/dev/null | grep -oE '[0-9]+(\.[0-9]+)+' | head -1)"
