#!/usr/bin/env bash
# systemd-analyze: the watchdog's tests verify the user units `watchdog install --systemd` writes (no running
# systemd manager is needed; Debian's systemd package ships it).
. "$(dirname "$0")/apt.sh"
if ! command -v systemd-analyze >/dev/null; then
  apt_install systemd || exit 1
fi
echo "tools: systemd-analyze $(systemd-analyze --version 2>/dev/null | sed -n '1s/^systemd \([0-9]*\).*/\1/p')"
