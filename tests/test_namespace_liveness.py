"""The Stop hook runs inside the agent's PID namespace, where the supervisor's pid is not visible (or is another
process): it must still see a live supervisor, or every interactive push-back falls back to typing into the pane."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from nightshift.supervisor.run.liveness import write_supervisor_info
from nightshift.supervisor.run.own_python import PACKAGE_ROOT
from tests.fixtures_namespace import need_namespace

PROBE = (f"import sys, types; n = types.ModuleType('nightshift'); n.__path__ = [{str(PACKAGE_ROOT)!r}]; "
         "sys.modules['nightshift'] = n; from pathlib import Path; "
         "from nightshift.supervisor.run.liveness import supervisor_status; "
         "print(supervisor_status(Path(sys.argv[1]))['alive'])")


def _status_inside_pid_namespace(run_dir: Path) -> str:
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--unshare-pid",
            sys.executable, "-S", "-c", PROBE, str(run_dir / "supervisor.json")]
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout.strip()


def test_a_supervisor_holding_its_lock_is_alive_from_inside_a_pid_namespace(tmp_path):
    need_namespace()
    write_supervisor_info(tmp_path / "supervisor.json")
    fd = os.open(tmp_path / "supervisor.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _status_inside_pid_namespace(tmp_path) == "True"
    finally:
        os.close(fd)
    assert _status_inside_pid_namespace(tmp_path) == "False"  # the lock let go: the supervisor is gone
