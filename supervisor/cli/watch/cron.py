"""`nightshift watchdog install|remove|status`: a user crontab line that runs `nightshift resume --dead` every few
minutes, so a run whose supervisor died (killed, out of memory, the login node rebooted) heals without a person.

The line is found again by its marker, which names this user's state folder (the registry the line revives): a second
install replaces it, `remove` takes out only it, and the user's other crontab lines are never touched. cron starts the
command with a bare environment, so the line carries PATH and XDG_STATE_HOME; never a key or a token (no secret is
written to a file): the revived supervisor and its agent find their credentials as cron's environment gives them
(a Claude login in the home directory works; a key only in an interactive shell's environment does not).
Without cron (no `crontab`, or no cron daemon running) the watchdog says how to run `resume --dead` from the
user's own scheduler, or `--systemd` for a systemd user timer (supervisor/cli/watch/systemd.py).
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.own_python import python_line
from nightshift.supervisor.run.paths import registry_path

OWN_SCHEDULER = ("run `{cmd}` every few minutes from your own scheduler (`nightshift watchdog install --systemd`, "
                 "a Slurm scrontab, or a loop in a tmux session: `while sleep 300; do {cmd}; done`)")


class WatchdogError(UserError):
    pass


def command() -> str:
    return python_line("nightshift.supervisor.cli.main", "resume", "--dead")


def marker() -> str:
    return f"# nightshift-watchdog {registry_path().parent}"


def cron_line(every: int) -> str:
    log = registry_path().parent / "watchdog.log"
    env = f"PATH={shlex.quote(os.environ.get('PATH', '/usr/bin:/bin'))} " \
          f"XDG_STATE_HOME={shlex.quote(str(registry_path().parent.parent))}"
    return f"*/{every} * * * * {env} {command()} >> {shlex.quote(str(log))} 2>&1 {marker()}"


def watchdog_main(action: str, every: int = 5, systemd: bool = False) -> int:
    if systemd:  # where cron is not allowed: a systemd user service and timer
        from nightshift.supervisor.cli.watch import systemd as systemd_watchdog
        if action == "install":
            return systemd_watchdog.install(every)
        if action in ("remove", "uninstall"):
            return systemd_watchdog.uninstall()
        installed, detail = systemd_watchdog.status()
        print(f"watchdog (systemd) {'installed' if installed else 'not installed'}: {detail}")
        return 0 if installed else 1
    if action == "uninstall":
        action = "remove"
    if action == "install":
        if not 1 <= every <= 59:
            raise WatchdogError(f"--every {every}: give the minutes between checks, from 1 to 59 (e.g. --every 5)")
        _write(_without_ours(_read()) + [cron_line(every)])
        print(f"watchdog installed: every {every} min cron runs `{command()}` (see `crontab -l`); "
              f"its output goes to {registry_path().parent / 'watchdog.log'}")
        if not cron_running():
            print("warning: no cron daemon is running on this host, so the line will not run until one is started "
                  f"(e.g. `service cron start`), or {OWN_SCHEDULER.format(cmd=command())}")
        return 0
    if action == "remove":
        lines = _read()
        kept = _without_ours(lines)
        if len(kept) == len(lines):
            print("watchdog: not installed; nothing to remove")
            return 0
        _write(kept)
        print("watchdog removed (your other crontab lines are untouched)")
        return 0
    installed, detail = watchdog_status()
    print(f"watchdog {'installed' if installed else 'not installed'}: {detail}")
    return 0 if installed else 1


def watchdog_status() -> tuple[bool, str]:
    """(installed, one line) for `watchdog status` and `doctor`; never raises."""
    if not shutil.which("crontab"):
        return False, f"no crontab on this host; {OWN_SCHEDULER.format(cmd=command())}"
    try:
        ours = [line for line in _read() if line.endswith(marker())]
    except WatchdogError as exc:
        return False, str(exc)
    if not ours:
        return False, "`nightshift watchdog install` resumes runs whose supervisor died, every 5 minutes"
    running = "" if cron_running() else "; but no cron daemon is running here, so it does not run"
    return True, f"crontab line `{ours[0].split(' ', 5)[0]} ...` runs `resume --dead`{running}"


def cron_running() -> bool:
    """Is a cron daemon running on this host? (Debian's cron records its pid; others are found by name.)"""
    for pidfile in ("/var/run/crond.pid", "/run/crond.pid"):
        try:
            os.kill(int(open(pidfile).read().strip()), 0)
            return True
        except (OSError, ValueError):
            continue
    try:
        return subprocess.run(["pgrep", "-x", "cron|crond|cronie"], capture_output=True).returncode == 0
    except OSError:
        return False


def _read() -> list[str]:
    if not shutil.which("crontab"):
        raise WatchdogError(f"no cron on this host (no `crontab` command); {OWN_SCHEDULER.format(cmd=command())}")
    proc = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    if proc.returncode != 0:
        said = " ".join(proc.stderr.split())
        if "no crontab" in said.lower():
            return []
        raise WatchdogError(f"cannot read your crontab ({said or f'crontab -l exit {proc.returncode}'}); "
                            f"{OWN_SCHEDULER.format(cmd=command())}")
    return proc.stdout.splitlines()


def _without_ours(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.endswith(marker())]


def _write(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n" if lines else ""
    proc = subprocess.run(["crontab", "-"], input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        said = " ".join((proc.stderr or proc.stdout).split()) or f"exit {proc.returncode}"
        raise WatchdogError(f"cannot write your crontab ({said}); nothing was changed; "
                            f"{OWN_SCHEDULER.format(cmd=command())}")
