"""What makes the mount namespace a sandbox, as pieces of bubblewrap's argv (mounts.py puts them in order):

- no capabilities, as root too: a user namespace with every capability dropped and no further user namespace
  (``--unshare-user --cap-drop ALL --disable-userns``); pid, ipc, uts and cgroup namespaces of its own;
- its own session for a command and a headless turn (no controlling terminal to push keystrokes into); an
  interactive turn in a tmux pane keeps its terminal and the seccomp filter refuses TIOCSTI/TIOCLINUX instead;
- a private /dev (a pty namespace of its own: no other terminal of the user's) with the GPUs bound in where present,
  and a private /dev/shm that ends with the process;
- no unix socket of the user's or the machine's: /run/user is an empty tmpfs, the host's /tmp is private, and every
  socket path the host's kernel lists as bound (``/proc/net/unix``: $HOME's tmux servers, /run's, docker's...) is
  covered by /dev/null, but those a run names (``[policy] sockets``; a Slurm run gets munge's);
- the socket environment not passed in (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, TMUX...);
- credential places in $HOME unreadable (``CREDENTIAL_PLACES``; ``[policy] deny_read`` adds, ``allow_read`` takes
  one back).
"""
from __future__ import annotations

import glob
import os
import stat
from pathlib import Path

from nightshift.supervisor.config.credential_places import CREDENTIAL_PLACES

USER_NS = ["--unshare-user", "--cap-drop", "ALL", "--disable-userns"]
def nested_user_ns() -> list[str]:
    """For a turn that runs Claude Code's own sandbox inside: further user namespaces allowed, and, as root,
    CAP_SETFCAP kept (the kernel asks for it to map uid 0 in a child user namespace; file capabilities set here are
    rooted in this namespace), as Anthropic's sandbox-runtime does."""
    return ["--unshare-user", "--cap-drop", "ALL"] + (["--cap-add", "CAP_SETFCAP"] if os.getuid() == 0 else [])


PRIVATE = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent"]
# Devices a scientific workload needs bound into the private /dev where the machine has them: GPUs (NVIDIA, DRM,
# AMD's KFD), accelerators, and the InfiniBand verbs MPI uses between nodes.
GPU_NODES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd", "/dev/accel", "/dev/infiniband")
SOCKET_ENV = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
              "DBUS_SYSTEM_BUS_ADDRESS", "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "XDG_RUNTIME_DIR", "DISPLAY",
              "WAYLAND_DISPLAY", "STY", "DOCKER_HOST", "PULSE_SERVER", "SWAYSOCK", "I3SOCK", "KRB5CCNAME")
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")


def credential_places(deny_read: list[str] | tuple[str, ...] = (), allow_read: list[str] | tuple[str, ...] = (),
                      home: Path | None = None) -> list[Path]:
    """The deny-list as paths (``allow_read`` names entries of the default list to take back)."""
    home = home if home is not None else Path.home()
    kept = [p for p in CREDENTIAL_PLACES if p not in set(allow_read)] + list(deny_read)
    return [home / p[2:] if p.startswith("~/") else Path(p).expanduser() for p in kept]


def credential_argv(places: list[Path]) -> list[str]:
    """A tmpfs over each credential folder, /dev/null over each file (absent ones need nothing)."""
    argv: list[str] = []
    for place in places:
        try:
            mode = place.lstat().st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            argv += ["--tmpfs", str(place)]
        elif not stat.S_ISLNK(mode):
            argv += ["--ro-bind", "/dev/null", str(place)]
        else:  # a link: cover what it names too (a link's own path cannot be a mount point without its target)
            target = place.resolve()
            argv += ["--tmpfs", str(target)] if target.is_dir() else (
                ["--ro-bind", "/dev/null", str(target)] if target.exists() else [])
    return argv


def device_argv() -> list[str]:
    """A private /dev and /dev/shm, and the GPUs (and InfiniBand) where the machine has them."""
    argv = ["--dev", "/dev", "--tmpfs", "/dev/shm"]
    for pattern in GPU_NODES:
        for node in sorted(glob.glob(pattern)):
            argv += ["--dev-bind", node, node]
    return argv


def _unix_names() -> set[str]:
    """The names of the unix sockets the host's network namespace has bound (/proc/net/unix's last column): a path,
    or ``@name`` for an abstract socket."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()[1:]
    except OSError:
        return set()
    return {parts[7] for parts in (line.split(None, 7) for line in lines) if len(parts) == 8}


def host_sockets() -> list[Path]:
    """Every unix socket path the host's kernel lists as bound (its network namespace's), that still exists as a
    socket. Abstract sockets (``@name``) have no path: a namespace without network cannot reach them."""
    found = []
    for text in sorted(name for name in _unix_names() if name.startswith("/")):
        try:
            if stat.S_ISSOCK(os.lstat(text).st_mode):
                found.append(Path(text))
        except OSError:
            continue
    return found


def host_abstract_sockets() -> list[str]:
    """The names of the abstract sockets the host's network namespace has (without the leading @)."""
    return sorted(name[1:] for name in _unix_names() if name.startswith("@"))


# Folders that are new inside, whole (a tmpfs, bwrap's private /dev): no host socket under them needs a cover. Each
# cover is a mount whose target must still exist when bwrap starts (a socket removed in between fails the start),
# so the fewer, the better on a shared node.
MASKED_WHOLE = (Path("/run/user"), Path("/dev"))


def socket_argv(visible, allowed: tuple[Path, ...] = ()) -> list[str]:
    """/dev/null over every host socket ``visible(path)`` says is still in view, but the ``allowed`` ones."""
    argv = ["--tmpfs", "/run/user"] if os.path.isdir("/run/user") else []
    allowed_set = {Path(os.path.realpath(p)) for p in allowed}

    def out_of_view(path: Path) -> bool:
        return any(path.is_relative_to(folder) for folder in MASKED_WHOLE) or not visible(path)

    for path in host_sockets():
        if Path(os.path.realpath(path)) in allowed_set or out_of_view(path):
            continue
        argv += ["--ro-bind", "/dev/null", str(path)]
    for path in allowed:  # a named socket out of view (/run/user's tmpfs, /dev, the host's /tmp): bound in
        if out_of_view(Path(path)) and os.path.exists(path):
            argv += ["--bind", str(path), str(path)]
    return argv


def env_argv() -> list[str]:
    argv: list[str] = []
    for name in SOCKET_ENV:
        argv += ["--unsetenv", name]
    return argv
