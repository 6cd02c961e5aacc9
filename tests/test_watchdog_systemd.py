"""The watchdog where cron is not allowed: `nightshift watchdog install --systemd` writes a systemd user service and
timer that run `resume --dead`, checked by the real `systemd-analyze verify` in user mode (no running manager is
needed), with no secret in them and paths with a space or a percent sign kept literal; `uninstall` removes them and
only them; `doctor` says whether lingering is on. Bad input is one line."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from nightshift.supervisor.cli.watch.systemd import linger_on
from tests.fixtures_core import nightshift, require_tool
from tests.test_bad_input import one_line_error

SECRET = "sk-ant-api03-not-for-any-file"


@pytest.fixture
def user_env(tmp_path):
    require_tool("systemd-analyze")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    state = tmp_path / "state 50% full"  # a space and a percent sign: literal in the unit, not a specifier
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(state),
            "XDG_RUNTIME_DIR": str(runtime), "ANTHROPIC_API_KEY": SECRET}


def verify(env: dict, *units) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("systemd-analyze"), "verify", "--user", *map(str, units)],
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=60)


def test_install_writes_a_service_and_timer_that_systemd_accepts_and_uninstall_removes_them(user_env, tmp_path):
    units = tmp_path / "config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "mine.service").write_text("[Service]\nExecStart=/bin/true\n")  # the user's own: never touched
    out = nightshift("watchdog", "install", "--systemd", "--every", "7", env=user_env)
    assert out.returncode == 0, out.stdout + out.stderr
    service, timer = units / "nightshift-watchdog.service", units / "nightshift-watchdog.timer"
    assert "linger: " in out.stdout and str(service) in out.stdout
    checked = verify(user_env, service, timer)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = service.read_text() + timer.read_text()
    assert SECRET not in text and "ANTHROPIC" not in text  # no key, however the installing shell had it
    assert "resume" in text and "--dead" in text and "OnUnitActiveSec=7min" in text
    assert '"XDG_STATE_HOME=' + user_env["XDG_STATE_HOME"].replace("%", "%%") + '"' in text
    assert "systemctl --user" in out.stdout  # no user manager answers in this container: what to run
    status = nightshift("watchdog", "status", "--systemd", env=user_env)
    assert status.returncode == 0 and "installed" in status.stdout
    assert nightshift("watchdog", "install", "--systemd", env=user_env).returncode == 0  # again: replaced
    assert "OnUnitActiveSec=5min" in timer.read_text() and len(list(units.glob("nightshift-*"))) == 2
    removed = nightshift("watchdog", "uninstall", "--systemd", env=user_env)
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert sorted(p.name for p in units.iterdir()) == ["mine.service"]
    assert nightshift("watchdog", "status", "--systemd", env=user_env).returncode == 1
    again = nightshift("watchdog", "uninstall", "--systemd", env=user_env)
    assert again.returncode == 0 and "nothing to remove" in again.stdout


def test_verify_is_a_real_check_a_broken_unit_fails_it(user_env, tmp_path):
    broken = tmp_path / "broken.service"
    broken.write_text("[Service]\nType=oneshot\nExecStart=resume-dead-without-a-path\n")
    assert verify(user_env, broken).returncode != 0


def test_doctor_says_whether_linger_is_on(user_env, workspace_dir):
    doctor = nightshift("doctor", str(workspace_dir), env=user_env)
    line = next(line for line in doctor.stdout.splitlines() if "linger" in line and "watchdog" not in line)
    assert ("on (the timer runs while you are logged out)" in line) == linger_on()
    assert linger_on() or "`loginctl enable-linger`" in line
    assert any("watchdog (systemd)" in line and "not installed" in line for line in doctor.stdout.splitlines())


@pytest.fixture
def workspace_dir(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_bad_input_is_one_line(user_env, tmp_path):
    one_line_error(nightshift("watchdog", "install", "--systemd", "--every", "0", env=user_env),
                   "--every 0", "from 1 to 59")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "systemd").write_text("a file where the folder should be")
    line = one_line_error(nightshift("watchdog", "install", "--systemd", env=user_env), "cannot write", "XDG_CONFIG_HOME")
    assert "systemd" in line
