"""`nightshift watchdog install|uninstall|status --systemd`: the watchdog where cron is not allowed, as a systemd user
service and timer (``nightshift-watchdog.service`` / ``.timer`` in ``$XDG_CONFIG_HOME/systemd/user``) that run
`nightshift resume --dead` every few minutes.

The units carry what the command needs and nothing more: the interpreter, PATH and XDG_STATE_HOME (the registry the
watchdog revives), never a key or a token. Each value is quoted for systemd (``%`` and ``$`` are its specifiers and
variables), so a path with a space or a percent sign stays a path. Where a user manager answers (`systemctl --user`),
the timer is enabled at once; where none does (a container, an SSH session without lingering), the files are written
and the line says what to run. A user timer runs while its user is logged out only with lingering on
(`loginctl enable-linger`): `status` and `doctor` say whether it is.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from nightshift.supervisor.run.own_python import python_argv
from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import registry_path

UNIT = "nightshift-watchdog"


class SystemdWatchdogError(UserError):
    pass


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def unit_files() -> tuple[Path, Path]:
    folder = unit_dir()
    return folder / f"{UNIT}.service", folder / f"{UNIT}.timer"


def quoted(value: str) -> str:
    """One word for a unit file: double-quoted, with systemd's specifiers (%) and variables ($) taken literally."""
    text = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{text}"'


def service_text() -> str:
    state_home = registry_path().parent.parent
    log = registry_path().parent / "watchdog.log"
    env = " ".join(quoted(f"{k}={v}") for k, v in (("PATH", os.environ.get("PATH", "/usr/bin:/bin")),
                                                      ("XDG_STATE_HOME", str(state_home))))
    exec_start = " ".join(quoted(a) for a in python_argv("nightshift.supervisor.cli.main", "resume", "--dead"))
    # append: takes a bare path (no quoting): one with whitespace goes to the user journal instead.
    output = ("" if any(c.isspace() for c in str(log))
              else f"StandardOutput=append:{str(log).replace('%', '%%')}\nStandardError=append:"
                   f"{str(log).replace('%', '%%')}\n")
    return (f"# written by `nightshift watchdog install --systemd` for {registry_path().parent}\n"
            "[Unit]\nDescription=nightshift watchdog: resume runs whose supervisor died\n\n"
            # WorkingDirectory=/: `python -m` puts its working folder first on the import path; none of ours there.
            f"[Service]\nType=oneshot\nWorkingDirectory=/\nEnvironment={env}\nExecStart={exec_start}\n{output}")


def timer_text(every: int) -> str:
    return ("# written by `nightshift watchdog install --systemd`\n"
            f"[Unit]\nDescription=nightshift watchdog every {every} min\n\n"
            f"[Timer]\nOnBootSec={every}min\nOnUnitActiveSec={every}min\nUnit={UNIT}.service\n\n"
            "[Install]\nWantedBy=timers.target\n")


def install(every: int) -> int:
    if not 1 <= every <= 59:
        raise SystemdWatchdogError(f"--every {every}: give the minutes between checks, from 1 to 59 (e.g. --every 5)")
    service, timer = unit_files()
    try:
        service.parent.mkdir(parents=True, exist_ok=True)
        for path, text in ((service, service_text()), (timer, timer_text(every))):
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text)
            tmp.chmod(0o644)  # the user manager reads it; it holds no secret
            tmp.replace(path)
    except OSError as exc:
        raise SystemdWatchdogError(f"cannot write the watchdog's units in {service.parent} ({exc.strerror}); "
                                   f"make the folder writable or set XDG_CONFIG_HOME") from None
    print(f"watchdog units written: {service} and {timer} (every {every} min: `resume --dead`)")
    if manager_running():
        for args in (["daemon-reload"], ["enable", "--now", f"{UNIT}.timer"]):
            _systemctl(*args)
        print(f"watchdog enabled: `systemctl --user list-timers {UNIT}.timer` shows its next run")
    else:
        print(f"no systemd user manager answers here: run `systemctl --user daemon-reload && systemctl --user "
              f"enable --now {UNIT}.timer` where one does")
    print(f"linger: {linger_line()}")
    return 0


def uninstall() -> int:
    service, timer = unit_files()
    if not service.exists() and not timer.exists():
        print("watchdog (systemd): not installed; nothing to remove")
        return 0
    if manager_running():
        _systemctl("disable", "--now", f"{UNIT}.timer", check=False)
    for path in (timer, service):
        path.unlink(missing_ok=True)
    if manager_running():
        _systemctl("daemon-reload", check=False)
    print(f"watchdog (systemd) removed: {service.name} and {timer.name} (other units untouched)")
    return 0


def status() -> tuple[bool, str]:
    """(installed, one line) for `watchdog status` and `doctor`; never raises."""
    service, timer = unit_files()
    if not (service.exists() and timer.exists()):
        return False, "no systemd user timer (`nightshift watchdog install --systemd` writes one)"
    enabled = "enabled" if manager_running() and _systemctl("is-enabled", f"{UNIT}.timer", check=False) == 0 \
        else "written (no user manager answers here to say whether it is enabled)"
    return True, f"systemd user timer {timer} {enabled}; linger {linger_line()}"


def linger_on(user: str | None = None) -> bool:
    """Is lingering on for this user (a user timer runs while they are logged out)? logind keeps a file per user."""
    user = user or pwd.getpwuid(os.getuid()).pw_name
    return Path("/var/lib/systemd/linger", user).exists()


def linger_line() -> str:
    if linger_on():
        return "on (the timer runs while you are logged out)"
    return ("off: the timer runs only while you are logged in; `loginctl enable-linger` (may need your admins) keeps "
            "it running")


def manager_running() -> bool:
    if not shutil.which("systemctl"):
        return False
    try:
        return subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _systemctl(*args: str, check: bool = True) -> int:
    proc = subprocess.run(["systemctl", "--user", *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        said = " ".join((proc.stderr or proc.stdout).split()) or f"exit {proc.returncode}"
        raise SystemdWatchdogError(f"systemctl --user {' '.join(args)} failed ({said}); the unit files are in "
                                   f"{unit_dir()}: run it yourself once the user manager answers")
    return proc.returncode
