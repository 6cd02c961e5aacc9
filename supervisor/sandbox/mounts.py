"""A Namespace says what a process may see, write and reach; ``bwrap_argv`` turns it into bubblewrap's command line.

The whole filesystem is read-only; the workspace and a private TMPDIR (a host folder seen as /tmp: the host's /tmp
is not shared) are writable, and so are the few extra places a caller names (the agent's own state, the paths the
hooks use to reach the supervisor). A hidden folder is an empty tmpfs; a hidden file is either covered by an empty
file (where the process writes, a tmpfs over its folder would swallow what it writes) or gone: its folder becomes a
tmpfs with every other entry bound back. A PID namespace ends everything the process started when it ends.

Around that, hardening.py's pieces make it a sandbox (no capabilities, a private /dev and /dev/shm, no host socket,
no credential place of $HOME, its own session) and seccomp.py's filter refuses what mounts cannot say; where the
machine cannot give a piece (probe.py's ``hardening``), the argv goes without it and ``doctor``/``check`` say so.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.run.own_python import PACKAGE_ROOT, bare_argv
from nightshift.supervisor.sandbox import hardening
from nightshift.supervisor.sandbox.probe import hardening_parts
from nightshift.supervisor.sandbox.seccomp import FD, program_file, seccomp_prefix

HOST_TMP = Path("/tmp")


@dataclass
class Namespace:
    workspace: Path
    tmp: Path  # host folder seen as /tmp inside (TMPDIR)
    hidden: list[Path] = field(default_factory=list)  # absent inside
    read_only: list[Path] = field(default_factory=list)  # read-only inside the writable places
    writable: list[Path] = field(default_factory=list)  # writable: outside the workspace, or inside a read-only place
    network: bool = False
    written: frozenset[Path] = frozenset()  # folders the process writes to (see the module's docstring)
    empty: Path | None = None  # an empty private file that covers a hidden file where the process writes
    # bwrap --new-session: for headless turns. An interactive turn keeps its terminal (TIOCSTI is filtered); a command
    # gets its session from its caller (command.py)
    new_session: bool = True
    deny_read: tuple[Path, ...] = ()  # credential places (hardening.credential_places)
    sockets: tuple[Path, ...] = ()  # host sockets a run names as reachable ([policy] sockets, munge's for Slurm)
    own_sockets: tuple[Path, ...] = ()  # folders whose sockets are nightshift's own helpers for this process
    nested: bool = False  # a turn running Claude Code's own sandbox inside: user namespaces and mounts of its own

    def visible(self, path: Path) -> bool:
        """Does ``path`` exist inside at all? Everything under the host's /tmp is gone but what is bound back."""
        if not path.is_relative_to(HOST_TMP):
            return True
        return any(path.is_relative_to(p) for p in [self.workspace, *self.writable])


def _within(path: Path, folders: list[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def _covered(path: Path, written: frozenset[Path]) -> bool:
    parent = path.parent
    return any(parent.is_relative_to(w) or w.is_relative_to(parent) for w in written)


def hide_argv(ns: Namespace) -> tuple[list[str], list[Path]]:
    """The mounts that make ``ns.hidden`` absent, and the folders now empty (nothing is bound back inside them)."""
    hidden = sorted({p for p in ns.hidden if p.exists() and ns.visible(p)})
    folders = [p for p in hidden if p.is_dir()]
    argv: list[str] = []
    by_parent: dict[Path, set[str]] = {}
    for path in hidden:
        if path.is_dir() or _within(path, folders):
            continue
        if ns.empty is not None and _covered(path, ns.written):
            argv += ["--ro-bind", str(ns.empty), str(path)]
        else:
            by_parent.setdefault(path.parent, set()).add(path.name)
    for folder in folders:
        argv += ["--tmpfs", str(folder)]
    for parent, names in sorted(by_parent.items()):
        argv += ["--tmpfs", str(parent)]
        for entry in sorted(parent.iterdir()):
            if entry.name not in names:  # bind sources come from the unmasked filesystem
                argv += ["--ro-bind" if _within(entry, ns.read_only) else "--bind", str(entry), str(entry)]
    return argv, folders


def _installation_in_tmp() -> list[Path]:
    """This installation's Python and package where they live under the host's /tmp (a clone made there, as a
    developer checks a change): inside, /tmp is private, so the helpers and hooks nightshift starts there would not
    be found. Read-only, like the rest of the system."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent, PACKAGE_ROOT}
    found = sorted(p for p in paths if p.is_relative_to(HOST_TMP) and p != HOST_TMP and p.exists())
    return [p for p in found if not any(p != q and p.is_relative_to(q) for q in found)]


def _in_view(ns: Namespace, covered: list[Path]):
    """Is a host path still there inside once the ``covered`` folders are (and is it none of ours)?"""
    mine = [ns.tmp, *ns.own_sockets]
    return lambda path: (ns.visible(path) and not _within(path, covered) and not _within(path, mine))


def bwrap_argv(ns: Namespace) -> list[str]:
    """bubblewrap's argv up to and including ``--`` (after the seccomp prefix where the filter is available), and,
    where the namespace shares the machine's network, the Landlock launcher after it (abstract sockets have no path
    to cover: landlock.py scopes what it starts), so every caller's command runs in that scope.
    Order matters: later mounts cover earlier ones."""
    ws = ns.workspace
    parts = hardening_parts()
    if not parts.userns:  # no user namespace here: capabilities dropped all the same (setuid bwrap, or root)
        user_ns = ["--cap-drop", "ALL"]
    else:
        user_ns = hardening.nested_user_ns() if ns.nested else hardening.USER_NS
    argv = ["bwrap", *user_ns, *hardening.PRIVATE]
    if not ns.network:
        argv.append("--unshare-net")
    if ns.new_session:
        argv.append("--new-session")
    argv += ["--ro-bind", "/", "/", *hardening.device_argv(), "--proc", "/proc"]
    argv += ["--bind", str(ns.tmp), str(HOST_TMP)]
    for path in _installation_in_tmp():  # nightshift and its Python, installed under /tmp (a clone there)
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(ws), str(ws)]
    dotgit = ws / ".git"
    if dotgit.is_dir() and not dotgit.is_symlink():  # a mount point: the agent cannot swap .git for another one
        argv += ["--bind", str(dotgit), str(dotgit)]
    outside = [p for p in ns.writable if not p.is_relative_to(ws) and p.exists()]
    # Bound after the hides, so a folder named writable stays reachable inside a hidden one (a command run in the
    # verdict's tree writes its report into the run's folder, inside the hidden workspace); before them where it
    # holds something hidden (the hides then cover that again)
    early = [p for p in outside if any(Path(h).is_relative_to(p) for h in ns.hidden)]
    for path in early:
        argv += ["--bind", str(path), str(path)]
    hidden_folders = [p for p in ns.hidden if p.is_dir()]
    for path in ns.read_only:  # before the hidden ones: a bind of a folder would bring back what is hidden in it
        if path.exists() and ns.visible(path) and not _within(path, hidden_folders):
            argv += ["--ro-bind", str(path), str(path)]
    hides, empty_folders = hide_argv(ns)
    argv += hides
    for path in outside:
        if path not in early:
            argv += ["--bind", str(path), str(path)]
    for path in ns.writable:
        if path.is_relative_to(ws) and path.exists() and not _within(path, empty_folders):
            argv += ["--bind", str(path), str(path)]
    argv += hardening.credential_argv([p for p in ns.deny_read if _in_view(ns, hidden_folders)(p)])
    credential_folders = [p for p in ns.deny_read if p.is_dir()]
    argv += hardening.socket_argv(_in_view(ns, hidden_folders + credential_folders), ns.sockets)
    argv += hardening.env_argv()
    # NIGHTSHIFT_NAMESPACE: `nightshift compare` in here answers as inside a run (held-out told at a claim only)
    argv += ["--setenv", "TMPDIR", "/tmp", "--setenv", "NIGHTSHIFT_NAMESPACE", "1", "--chdir", str(ws)]
    scope = bare_argv("nightshift.supervisor.sandbox.landlock") if ns.network and parts.landlock else []
    program = program_file(ns.nested) if parts.seccomp else None
    if program is None:
        return argv + ["--", *scope]
    return seccomp_prefix(program) + argv + ["--seccomp", str(FD), "--", *scope]
