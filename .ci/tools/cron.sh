#!/usr/bin/env bash
# Debian's cron daemon and crontab: the watchdog's tests install a crontab line and start the daemon themselves.
. "$(dirname "$0")/apt.sh"
PATH="$PATH:/usr/sbin:/sbin"
if ! command -v cron >/dev/null || ! command -v crontab >/dev/null; then
  apt_install cron || exit 1
fi
echo "tools: cron $(dpkg-query -W -f='${Version}' cron 2>/dev/null || echo '(version unknown)')"
