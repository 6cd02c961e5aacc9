"""The probes of the sandbox's surfaces, run from inside the namespace (``python -S -E -P``: standard library only).

``main(argv)`` reads a JSON file the outside wrote (what to try: the host's sockets, the credential places that
exist, the host's ptys, a /dev/shm marker name) and prints one JSON line per surface: ``{"surface", "closed",
"detail"}``. Each probe tries the door itself (umount, remount, connect, open, ioctl, unshare, io_uring_setup...):
a surface is closed only when the attempt was refused. survey.py runs it for ``doctor``, ``check`` and the tests.
"""
from __future__ import annotations

import ctypes
import json
import os
import socket
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
TIOCSTI = 0x5412
# Syscall numbers where the C library has no wrapper (x86_64, aarch64).
NUMBERS = {"x86_64": {"io_uring_setup": 425, "keyctl": 250, "bpf": 321, "userfaultfd": 323, "perf_event_open": 298},
           "aarch64": {"io_uring_setup": 425, "keyctl": 219, "bpf": 280, "userfaultfd": 282, "perf_event_open": 241}}


def _errno_call(fn, *args) -> tuple[int, int]:
    ctypes.set_errno(0)
    result = fn(*args)
    return result, ctypes.get_errno()


def capabilities() -> tuple[bool, str]:
    with open("/proc/self/status") as fh:
        eff = next((line.split()[1] for line in fh if line.startswith("CapEff:")), "?")
    return int(eff, 16) == 0 if eff != "?" else False, f"CapEff {eff}"


def _in_child(attempt) -> int:
    """Run ``attempt`` (returns an errno, 0 when it worked) in a forked child, so a door that is open (the control,
    run outside) changes nothing of this process or, for mounts, of the host: the child first takes a mount
    namespace of its own where it can (outside as root); inside that is refused and it tries on the sandbox's own."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = attempt()
        finally:
            os._exit(min(code, 255))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _private_mounts() -> None:
    if LIBC.unshare(CLONE_NEWNS) == 0:
        LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)


def mounts() -> tuple[bool, str]:
    """umount of a tmpfs (as over a hidden folder) and a remount of / writable: both refused?"""
    def umount() -> int:
        _private_mounts()
        target = b"/dev/shm" if os.path.ismount("/dev/shm") else b"/proc"
        return 0 if LIBC.umount2(target, 2) == 0 else ctypes.get_errno()  # MNT_DETACH

    def remount() -> int:
        _private_mounts()
        return 0 if LIBC.mount(b"none", b"/", None, MS_REMOUNT | MS_BIND, None) == 0 else ctypes.get_errno()

    um, rm = _in_child(umount), _in_child(remount)
    return um != 0 and rm != 0, f"umount: {os.strerror(um) if um else 'worked'}; " \
                                f"remount / rw: {os.strerror(rm) if rm else 'worked'}"


def _reached(addresses: list[str]) -> list[str]:
    """The unix socket addresses (a path, or NUL and an abstract name) a connect reaches from here."""
    reached = []
    for address in addresses:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            try:
                s.connect(address)
                reached.append(address)
            except OSError:
                continue
    return reached


def sockets(paths: list[str]) -> tuple[bool, str]:
    reached = _reached(paths)
    own = os.path.join(os.environ.get("TMPDIR", "/tmp"), f".probe-{os.getpid()}.sock")
    try:  # the private /tmp keeps its own sockets working (forkserver, Manager, MPI)
        with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
            server.bind(own)
            server.listen(1)
            client.connect(own)
        private = "a socket in the private /tmp works"
    except OSError as exc:
        private = f"a socket in the private /tmp FAILED ({exc})"
    finally:
        if os.path.exists(own):
            os.unlink(own)
    if reached:
        return False, f"reached {len(reached)} of {len(paths)} host sockets: {', '.join(reached[:5])}; {private}"
    return True, f"none of {len(paths)} host sockets reachable; {private}"


def abstract(names: list[str]) -> tuple[bool, str]:
    """The machine's abstract sockets (``@name``): out of reach through the network namespace or a Landlock scope."""
    reached = ["@" + address[1:] for address in _reached(["\0" + name for name in names])]
    if reached:
        return False, f"reached {len(reached)} of {len(names)}: {', '.join(reached[:5])}"
    return True, f"none of {len(names)} abstract sockets of the machine reachable"


def environment(names: list[str]) -> tuple[bool, str]:
    present = [n for n in names if n in os.environ]
    return not present, f"set inside: {', '.join(present)}" if present else "none of the socket variables is set"


def terminals(host_ptys: list[str]) -> tuple[bool, str]:
    opened = []
    for pty in host_ptys:
        try:
            fd = os.open(pty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
            os.close(fd)
            opened.append(pty)
        except OSError:
            continue
    blocks = [n for n in os.listdir("/dev") if n.startswith(("sd", "nvme", "vd", "xvd", "mem", "kmem", "port"))]
    ok = not opened and not blocks
    return ok, (f"opened {', '.join(opened)}" if opened else f"none of {len(host_ptys)} host terminals") + \
        (f"; host devices visible: {', '.join(blocks[:5])}" if blocks else "; a private /dev")


def shm(marker: str, host_device: int | None) -> tuple[bool, str]:
    """Is this /dev/shm the host's (the same filesystem as the one the outside saw: ``host_device``)? Then it is
    open. Also writes a marker: the outside checks it is not in the host's (and the tmpfs ends with us)."""
    try:
        device = os.stat("/dev/shm").st_dev
    except OSError as exc:
        return True, f"no /dev/shm here ({exc})"
    if host_device is not None and device == host_device:
        return False, "the host's /dev/shm is shared: its files are readable and writable here"
    try:
        with open(os.path.join("/dev/shm", marker), "w") as fh:
            fh.write("inside")
        return True, "a private /dev/shm (written to)"
    except OSError as exc:
        return True, f"a private /dev/shm, not writable ({exc})"


def tiocsti() -> tuple[bool, str]:
    """Push a key into a terminal: a pty of our own (the filter refuses the ioctl whatever the terminal; never the
    controlling terminal, which may be the person's running ``doctor``)."""
    import fcntl
    import pty
    master, slave = pty.openpty()
    try:
        fcntl.ioctl(slave, TIOCSTI, b"x")
        return False, "TIOCSTI pushed a key into a terminal"
    except OSError as exc:
        return True, f"TIOCSTI refused ({exc.strerror})"
    finally:
        os.close(master)
        os.close(slave)


def syscalls() -> tuple[bool, str]:
    table = NUMBERS.get(os.uname().machine, {})
    allowed = []
    if _in_child(lambda: 0 if LIBC.unshare(CLONE_NEWUSER) == 0 else ctypes.get_errno()) == 0:
        allowed.append("unshare(CLONE_NEWUSER)")
    params = ctypes.create_string_buffer(120)
    for name, number in table.items():
        args = {"io_uring_setup": (1, params), "keyctl": (0, 0), "bpf": (0, None, 0), "userfaultfd": (0,),
                "perf_event_open": (None, 0, -1, -1, 0)}[name]
        result, err = _errno_call(LIBC.syscall, number, *args)
        if result >= 0:
            allowed.append(name)
            os.close(result) if name in ("io_uring_setup", "userfaultfd") else None
        elif err not in (1, 38):  # EPERM: refused; ENOSYS: not in this kernel. Anything else: it got through
            allowed.append(f"{name} ({os.strerror(err)})")
    return not allowed, f"allowed: {', '.join(allowed)}" if allowed else "unshare, io_uring, keyctl, bpf, " \
        "userfaultfd, perf_event_open refused"


def _opens(path: str) -> bool:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as fh:
                fh.read(1)
        return True
    except OSError:
        return False


def credentials(places: list[str]) -> tuple[bool, str]:
    readable = []
    for place in places:
        try:
            if os.path.isdir(place):  # listed names alone are no secret (Landlock leaves them): content is
                if any(_opens(os.path.join(place, name)) for name in os.listdir(place)):
                    readable.append(place)
            elif os.path.getsize(place) > 0 or open(place, "rb").read(1):
                readable.append(place)
        except OSError:
            continue
    return not readable, f"readable: {', '.join(readable[:5])}" if readable else \
        f"none of {len(places)} credential places readable"


def session() -> tuple[bool, str]:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
        return False, "a controlling terminal is reachable"
    except OSError:
        return True, "no controlling terminal (a session of its own)"


def processes(outside: int | None) -> tuple[bool, str]:
    """The surveying process outside (a process of the same user): is it visible here, and does a signal reach it?"""
    if not outside:
        return True, "nothing to look for"
    if not os.path.exists(f"/proc/{outside}"):
        return True, "the host's processes are not visible (a PID namespace of its own)"
    try:
        os.kill(outside, 0)
        return False, "the host's processes are visible and signals reach them"
    except PermissionError:
        return False, "the host's processes are visible (signals to them refused)"
    except OSError as exc:
        return False, f"the host's processes are visible ({exc.strerror})"


def host_tmp(marker: str | None) -> tuple[bool, str]:
    """A file the outside made in the host's /tmp: seen here means the host's /tmp is shared."""
    if not marker or not os.path.exists(marker):
        return True, "a private /tmp (the host's is not shared)"
    probe = marker + ".inside"
    try:
        with open(probe, "w"):
            pass
        os.unlink(probe)
        return False, "the host's /tmp is shared: readable and writable"
    except OSError:
        return False, "the host's /tmp is shared: readable (writes refused)"


def run(plan: dict) -> list[dict]:
    probes = [("capabilities", capabilities), ("mounts", mounts),
              ("unix sockets", lambda: sockets(plan.get("sockets", []))),
              ("abstract sockets", lambda: abstract(plan.get("abstract", []))),
              ("socket environment", lambda: environment(plan.get("env", []))),
              ("terminals and /dev", lambda: terminals(plan.get("ptys", []))),
              ("/dev/shm", lambda: shm(plan.get("marker", "nightshift-probe"), plan.get("shm_device"))),
              ("TIOCSTI", tiocsti), ("syscalls", syscalls),
              ("credentials", lambda: credentials(plan.get("credentials", []))),
              ("processes", lambda: processes(plan.get("outside_pid"))),
              ("host /tmp", lambda: host_tmp(plan.get("tmp_marker")))]
    if plan.get("session"):
        probes.append(("session", session))
    out = []
    for name, probe in probes:
        try:
            closed, detail = probe()
        except Exception as exc:  # a probe that cannot run proves nothing closed
            closed, detail = False, f"the probe failed: {type(exc).__name__}: {exc}"
        out.append({"surface": name, "closed": bool(closed), "detail": detail})
    return out


def main(argv: list[str]) -> int:
    with open(argv[0]) as fh:
        plan = json.load(fh)
    for line in run(plan):
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
