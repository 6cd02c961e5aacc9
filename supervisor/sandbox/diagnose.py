"""Why bubblewrap cannot make a namespace here, in words a user can act on: the cause (no bubblewrap, user namespaces
switched off by which knob, AppArmor's restriction, a container that blocks them, a setuid-only bubblewrap) and its
fix (the package for this distribution, the sysctl or AppArmor profile an administrator sets). Read from files the
kernel and the distribution publish (/proc/sys, /etc/os-release) and bubblewrap's own message: nothing is changed.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

SYSCTL = Path("/proc/sys")
OS_RELEASE = Path("/etc/os-release")
ASK = "ask the machine's administrators"
# The package manager line per distribution family (os-release's ID, then each of ID_LIKE).
INSTALL = {"debian": "apt-get install bubblewrap", "ubuntu": "apt-get install bubblewrap",
           "rhel": "dnf install bubblewrap", "fedora": "dnf install bubblewrap", "centos": "dnf install bubblewrap",
           "rocky": "dnf install bubblewrap", "almalinux": "dnf install bubblewrap",
           "suse": "zypper install bubblewrap", "opensuse": "zypper install bubblewrap",
           "sles": "zypper install bubblewrap", "arch": "pacman -S bubblewrap", "alpine": "apk add bubblewrap",
           "gentoo": "emerge sys-apps/bubblewrap"}
APPARMOR_PROFILE = ("an AppArmor profile that grants userns to /usr/bin/bwrap (/etc/apparmor.d/bwrap: "
                    "'abi <abi/4.0>, include <tunables/global>, profile bwrap /usr/bin/bwrap flags=(unconfined) "
                    "{ userns, }', then apparmor_parser -r /etc/apparmor.d/bwrap)")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def os_release(path: Path = OS_RELEASE) -> dict[str, str]:
    """os-release's KEY=value lines (quotes taken off)."""
    out: dict[str, str] = {}
    for line in (_read(path) or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            out[key.strip()] = value.strip().strip("\"'")
    return out


def install_line(path: Path = OS_RELEASE) -> str:
    """How to install bubblewrap on this distribution (its package manager), with a generic line where unknown."""
    release = os_release(path)
    for family in [release.get("ID", ""), *release.get("ID_LIKE", "").split()]:
        if family.lower() in INSTALL:
            name = release.get("PRETTY_NAME") or family
            return f"{INSTALL[family.lower()]} ({name}; as root, or {ASK})"
    return f"install the bubblewrap package of your distribution ({ASK})"


def in_container() -> str | None:
    """The kind of container this process runs in, where it says so (docker, podman, a generic one), else None."""
    if Path("/.dockerenv").exists():
        return "docker"
    if Path("/run/.containerenv").exists():
        return "podman"
    container = (_read(Path("/proc/1/environ")) or "").split("\0")
    for item in container:
        if item.startswith("container="):
            return item.split("=", 1)[1] or "a container"
    return None


def setuid_bwrap(bwrap: str | None) -> bool:
    """bubblewrap installed setuid root (old distributions: RHEL 7, Debian before 11): it works without user
    namespaces, but a user namespace without capabilities (the sandbox's userns part) is not what it gives."""
    try:
        return bool(bwrap) and bool(os.stat(bwrap).st_mode & stat.S_ISUID)
    except OSError:
        return False


def userns_cause(message: str, sysctl: Path = SYSCTL) -> str:
    """Which knob keeps unprivileged user namespaces off, from bubblewrap's ``message`` and /proc/sys, with its fix."""
    text = message.lower()
    max_ns = _read(sysctl / "user" / "max_user_namespaces")
    clone = _read(sysctl / "kernel" / "unprivileged_userns_clone")
    apparmor = _read(sysctl / "kernel" / "apparmor_restrict_unprivileged_userns")
    if "uid map" in text or "setting up uid" in text or apparmor == "1":
        return ("AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = "
                f"{apparmor or '1'}, Ubuntu 23.10+); fix: {APPARMOR_PROFILE}, or sysctl "
                f"kernel.apparmor_restrict_unprivileged_userns=0 ({ASK})")
    if max_ns == "0" or "enospc" in text or "max_" in text or "no space left" in text:
        now = f"it is {max_ns} here" if max_ns not in (None, "0") else "it is 0 here"
        return ("user namespaces are switched off or used up (the kernel answers ENOSPC: user.max_user_namespaces "
                f"= 0 is RHEL 7's default and DISA STIG's rule; {now}); fix: sysctl user.max_user_namespaces=15000 "
                f"({ASK})")
    if clone == "0" or "non-privileged user namespaces" in text or "no permissions to create" in text:
        return (f"unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone = {clone or '0'}, "
                "Debian's knob, or user.max_user_namespaces); fix: sysctl kernel.unprivileged_userns_clone=1 "
                f"({ASK})")
    container = in_container()
    if container or "operation not permitted" in text or "eperm" in text:
        where = f"this {container} container" if container else "this machine"
        return (f"{where} does not let a process make user namespaces (a container's seccomp profile or a "
                "security module refuses them); fix: run nightshift outside the container, or start the container "
                f"with user namespaces allowed (docker: --security-opt seccomp=unconfined) ({ASK})")
    return f"user namespaces are not available to this user; fix: allow unprivileged user namespaces ({ASK})"


def namespace_cause(bwrap: str | None, message: str | None) -> str:
    """The whole reason bubblewrap cannot make a namespace: missing (with this distribution's package) or refused
    (with the knob and its fix)."""
    if not bwrap:
        return f"bubblewrap is not installed; fix: {install_line()}"
    why = message or "no message"
    return f"bubblewrap cannot create namespaces here ({why}): {userns_cause(why)}"
