"""Debian's real cron daemon for the watchdog's tests: the one already running on this host, or one the fixture
starts (and ends, by its pid). A missing cron fails under CI=true (`make test` installs it: .ci/tools/cron.sh) and
skips loudly elsewhere. Each test's crontab line names the test's private state folder, and the fixture removes
whatever line of that folder is left, so a person's own crontab lines are never touched.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from nightshift.supervisor.cli.watch.cron import cron_running, marker

SBIN = "/usr/sbin:/sbin"


def cron_binary() -> str | None:
    return shutil.which("cron", path=f"{os.environ.get('PATH', '')}:{SBIN}")


@pytest.fixture
def cron_daemon():
    binary = cron_binary()
    if not binary or not shutil.which("crontab"):
        if os.environ.get("CI") == "true":
            pytest.fail("cron is required in CI but not installed (make test installs it: .ci/tools/cron.sh)")
        pytest.skip("cron not installed: the watchdog's tests need Debian's real cron (apt-get install cron)")
    started = None
    if not cron_running():
        started = subprocess.Popen([binary, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield binary
    finally:
        _remove_our_lines()
        if started is not None:
            os.kill(started.pid, signal.SIGTERM)
            started.wait(timeout=30)


def _remove_our_lines() -> None:
    listed = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    if listed.returncode != 0:
        return
    kept = [line for line in listed.stdout.splitlines() if not line.endswith(marker())]
    if len(kept) != len(listed.stdout.splitlines()):
        subprocess.run(["crontab", "-"], input="\n".join(kept) + "\n" if kept else "", text=True, check=True)


def our_lines() -> list[str]:
    listed = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    return [line for line in listed.stdout.splitlines() if line.endswith(marker())]
