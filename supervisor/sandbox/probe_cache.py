"""What this machine's sandbox can give, kept for the rest of the boot: every `nightshift compare` with an oracle
command, every turn and test command, used to probe it afresh (two bubblewrap runs, and libseccomp's binding
loaded, whose ctypes lookup runs `ldconfig -p` twice: ~50 ms of a half-second compare).

The answers hold for as long as what they depend on is unchanged, so the key is all of it: the boot (the kernel, its
Landlock ABI, user-namespace support set at boot), the user, the bubblewrap binary (path, inode, size, mtime), the
sysctls that switch unprivileged user namespaces on and off at run time, the process's own confinement (seccomp
filters, user and mount namespaces), libseccomp's Python binding (where it would be
imported from), and the source of the probe and of the filter's rules. Any change is a miss and a fresh probe. The
compiled seccomp program is remembered by its file name, which is its content's hash: a hit is used only when the file
still holds those bytes.

The file lives in the user's private state folder (0700; written by rename). Inside nightshift's namespace that
folder is out of the agent's reach; outside it (no bubblewrap) the agent's code runs as the user anyway and no
answer of this cache widens what it can do: a forged "bubblewrap works" makes the sandboxed start fail loudly.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from nightshift.supervisor.run.paths import make_private_dir, user_state_dir

SYSCTLS = ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
           "/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
SOURCES = ("probe.py", "seccomp.py", "probe_cache.py", "diagnose.py")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return "-"


def key(bwrap: str | None) -> str:
    """Everything the probes' answers depend on, hashed."""
    parts = [_read("/proc/sys/kernel/random/boot_id"), str(os.getuid()), str(bwrap)]
    if bwrap:
        try:
            st = os.stat(bwrap)
            parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("gone")
    parts += [_read(path) for path in SYSCTLS]
    parts.append(_confinement())
    parts.append(_binding_file())
    here = Path(__file__).parent
    for name in SOURCES:
        try:
            parts.append(hashlib.sha256((here / name).read_bytes()).hexdigest())
        except OSError:
            parts.append("-")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _confinement() -> str:
    """What this process is already held by: its seccomp filters (a container's, or a site's that fails
    CLONE_NEWUSER as kernels without user namespaces do) and its user and mount namespaces. A process started under
    another confinement than the one that probed is a miss: bubblewrap may fail in it where it worked before."""
    status = _read("/proc/self/status").splitlines()
    held = [line for line in status if line.startswith(("Seccomp", "NoNewPrivs"))]
    for name in ("user", "mnt"):
        try:
            held.append(os.readlink(f"/proc/self/ns/{name}"))
        except OSError:
            held.append("-")
    return "|".join(held)


def _binding_file() -> str:
    """Where libseccomp's Python binding would be imported from, and its file's identity: a binding that moved,
    changed or went away is a miss (found without importing it: its ctypes lookup is what this cache saves)."""
    import importlib.util

    for name in ("pyseccomp", "seccomp"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            try:
                st = os.stat(spec.origin)
            except OSError:
                return f"{spec.origin}:gone"
            return f"{spec.origin}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
    return "no binding"


def _file() -> Path:
    return user_state_dir() / "sandbox" / "probe.json"


def load(bwrap: str | None) -> dict:
    """The answers kept for this key ({} on a miss or an unreadable file)."""
    try:
        found = json.loads(_file().read_text())
    except (OSError, ValueError):
        return {}
    return found.get("answers", {}) if isinstance(found, dict) and found.get("key") == key(bwrap) else {}


def store(bwrap: str | None, **answers) -> None:
    """Add ``answers`` to the ones kept for this key (a new key starts afresh)."""
    try:
        kept = load(bwrap)
        kept.update(answers)
        folder = make_private_dir(_file().parent)
        tmp = folder / f".probe.{os.getpid()}"
        tmp.write_text(json.dumps({"key": key(bwrap), "answers": kept}))
        os.chmod(tmp, 0o600)
        os.replace(tmp, folder / "probe.json")
    except OSError:
        pass  # a cache that cannot be written costs the next process a probe, nothing more
