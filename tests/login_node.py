"""A login node as many clusters have it, simulated on this machine without changing it (the suite's own sandbox
tests need user namespaces): run any command, as an ordinary user, where

- user namespaces are off: a seccomp filter on the process tree makes ``unshare`` and ``clone`` with CLONE_NEWUSER
  fail with the errno such kernels give (ENOSPC: ``user.max_user_namespaces = 0``, RHEL 7 / STIG; EPERM: Debian's
  ``kernel.unprivileged_userns_clone = 0``), and ``clone3`` answer ENOSYS so the C library falls back to clone;
- or bubblewrap is missing: a private mount namespace binds an empty, non-executable file over it.

Reusable by any test that wants its steps under the same simulation (the first-hour test of issue 47 too):
``login_node_argv(argv, user=..., userns="ENOSPC"|"EPERM"|None, bwrap=True|False)`` returns the argv to start as
root; ``make_user(name)`` makes the ordinary user once. Both need root (CI runs as root).
"""
from __future__ import annotations

import errno
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Runs as root: the filter (no_new_privs left off so runuser can still switch users below it), then the command.
FILTER = r"""
import errno, os, sys
import pyseccomp as sc
code = getattr(errno, sys.argv[1])
f = sc.SyscallFilter(sc.ALLOW)
f.set_attr(sc.Attr.CTL_NNP, 0)
for call in ("unshare", "clone"):
    f.add_rule(sc.ERRNO(code), call, sc.Arg(0, sc.MASKED_EQ, 0x10000000, 0x10000000))
f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
f.load()
os.execvp(sys.argv[2], sys.argv[2:])
"""
# In a private mount namespace: no bubblewrap where the system keeps it (shutil.which then finds none).
NO_BWRAP = 'for b in /usr/bin/bwrap /usr/local/bin/bwrap /bin/bwrap; do [ -e "$b" ] && mount --bind "$0" "$b"; ' \
           'done; exec "$@"'


def make_user(name: str):
    """The ordinary user (made once; kept between sessions like test_sandbox_user's)."""
    if os.getuid() != 0:
        pytest.skip("making a user needs root (CI runs as root)")
    for tool in ("useradd", "runuser", "unshare"):
        if not shutil.which(tool):
            if os.environ.get("CI") == "true":
                pytest.fail(f"{tool} is required in CI")
            pytest.skip(f"{tool} not installed")
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    return pwd.getpwnam(name)


def _empty_file() -> Path:
    path = Path("/run/nightshift-test-no-bwrap")
    if not path.exists():
        path.write_bytes(b"")
        os.chmod(path, 0o644)
    return path


def login_node_argv(argv: list[str], user: str | None = None, userns: str | None = "ENOSPC",
                    bwrap: bool = True) -> list[str]:
    """``argv`` as ``user`` (None: as root) with user namespaces off (``userns``: the errno's name; None leaves them
    on) and/or bubblewrap hidden (``bwrap=False``)."""
    inner = [shutil.which("runuser"), "-u", user, "--", *argv] if user else list(argv)
    if userns is not None:
        if not hasattr(errno, userns):
            raise ValueError(f"no errno named {userns}")
        inner = [sys.executable, "-c", FILTER, userns, *inner]
    if not bwrap:
        inner = [shutil.which("unshare"), "-m", "--propagation", "private", "--", "sh", "-c", NO_BWRAP,
                 str(_empty_file()), *inner]
    return inner


def user_import_path(user) -> str:
    """PYTHONPATH for the system's Python run as the user. The checkout and the venv's site-packages (read as a plain
    folder: the editable install's finder never loads) are linked file by file into a folder of the user's home:
    a clone in a home others cannot enter (mode 700, the usual) is out of the user's reach, a hard link to a
    readable file is not. For the driver and every process it starts (the agent's claim too). Shared by
    test_sandbox_user and test_sandbox_login_node."""
    root = Path(__file__).resolve().parent.parent
    site = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    shim = Path(user.pw_dir) / ".nightshift-import"
    shutil.rmtree(shim, ignore_errors=True)  # an earlier session's copy may be of another checkout
    shim.mkdir(mode=0o755)
    skip = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "bench")
    shutil.copytree(root, shim / "nightshift", ignore=skip, copy_function=_link)
    shutil.copytree(site, shim / "site", ignore=shutil.ignore_patterns("__pycache__"), copy_function=_link,
                    symlinks=True)
    return f"{shim}:{shim / 'nightshift'}:{shim / 'site'}"  # the second: the drivers' `import tests...`


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy
        shutil.copy2(src, dst)


def user_env(user, extra: dict | None = None) -> dict[str, str]:
    """The environment a driver run as ``user`` needs: the system's PATH, its HOME, and a PYTHONPATH reaching this
    checkout and this installation's site-packages (user_import_path)."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": user.pw_dir, "LANG": "C.UTF-8",
            "PYTHONPATH": user_import_path(user), **(extra or {})}


def run_driver(user, driver: str, timeout: float, userns: str | None = "ENOSPC", bwrap: bool = True,
               extra_env: dict | None = None) -> dict:
    """``driver`` (Python source) run by the system's Python as ``user`` on the simulated login node; its last line
    of output, as JSON."""
    import json
    python = shutil.which("python3", path="/usr/bin:/bin")
    argv = login_node_argv([python, "-c", driver], user=user.pw_name, userns=userns, bwrap=bwrap)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=user_env(user, extra_env),
                          cwd="/")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
