"""A Namespace (mounts.py: what a process may see and write) as the policy of the tiers without one (tier.py):
Landlock path rules and the seccomp program for confine.py, and the launcher's argv.

Landlock only grants: a folder's rule holds for everything beneath it. So a folder that holds something excluded
(a held-out file, a credential place; nightshift.toml and .nightshift/ for writes) gets no rule of its own but
the listing of its entries, and each entry that is not excluded gets the whole rule (recursively). What follows
from it, named by tier.LEFT_OPEN: a new entry in such a folder (a new file at the workspace's top level, where
nightshift.toml sits) cannot be written until the next turn recomputes the rules; names of hidden entries stay
listed, their content does not. git's control files are held after the fact (restored and named at every stop),
so that .git takes new entries and the agent can stage and commit.
"""
from __future__ import annotations

import glob
import json
import os
from pathlib import Path

from nightshift.supervisor.run.own_python import bare_argv
from nightshift.supervisor.sandbox import hardening, landlock
from nightshift.supervisor.sandbox.seccomp import program_file
from nightshift.supervisor.sandbox.tier import Tier

DEVICES = landlock.READ | landlock.WRITE_FILE | landlock.IOCTL_DEV | landlock.TRUNCATE
# The device nodes a process writes (never a disk: /dev itself is only read); terminals for an interactive turn.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
                    "/dev/pts")
# Shared by every process of the machine in this tier (no private /dev/shm): semaphores and shared memory need it.
SHARED_WRITABLE = (Path("/dev/shm"),)


def _real(paths) -> list[Path]:
    out = []
    for path in paths:
        try:
            if os.path.lexists(path):
                out.append(Path(os.path.realpath(path)))
        except OSError:
            continue
    return out


def grant(root: Path, rights: int, excluded: list[Path]) -> list[tuple[str, int]]:
    """``rights`` beneath ``root`` but under each excluded path (a folder on the way to one is listed only)."""
    inside = [e for e in excluded if e == root or e.is_relative_to(root)]
    if not inside:
        return [(str(root), rights)]
    if root in inside:
        return []
    rules = [(str(root), landlock.READ_DIR)]
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return rules
    for entry in entries:
        if entry.is_symlink():
            continue  # a link grants nothing: what it names is granted (or not) where it lives
        rules += grant(Path(entry.path), rights, inside)
    return rules


def make_outputs(ws: Path, folders) -> None:
    """The candidates' folders (out/), made beforehand where missing: a new folder beside nightshift.toml can never
    be made inside (Landlock only grants), and a solver that writes out/ is the common shape. Made here, outside,
    a component at a time, never through a link (the workspace is a stranger's ground)."""
    for folder in folders:
        here = ws
        for part in Path(folder).relative_to(ws).parts:
            here = here / part
            try:
                os.mkdir(here, 0o755)
            except FileExistsError:
                pass
            except OSError:
                break
            if here.is_symlink() or not here.is_dir():
                break


def policy(ns, tier: Tier, outputs=()) -> dict:
    """The launcher's policy for the Namespace ``ns`` (mounts.Namespace) under ``tier``; ``outputs``: folders inside
    the workspace that must take new files (Boundary.outputs)."""
    ws = Path(os.path.realpath(ns.workspace))
    if tier.name == "landlock":
        make_outputs(ws, [Path(os.path.realpath(f)) for f in outputs if Path(os.path.realpath(f)).is_relative_to(ws)])
    writable = _real([ws, ns.tmp, *ns.writable])
    hidden = _real([*ns.hidden, *ns.deny_read])
    # git's control files (.git/config, hooks/, info/) are held after the fact here (verify/git_controls.py puts
    # them back and names it at every stop): kept read-only, .git itself would take no new entry (index.lock) and
    # the agent could not stage or commit
    dotgit = ws / ".git"
    read_only = [p for p in _real(ns.read_only) if not p.is_relative_to(dotgit)]
    out: dict = {"unset": list(hardening.SOCKET_ENV), "chdir": str(ws),
                 "set": {"TMPDIR": str(ns.tmp), "NIGHTSHIFT_NAMESPACE": "1", "NIGHTSHIFT_TIER": tier.name},
                 "new_session": ns.new_session, "landlock": tier.name == "landlock"}
    program = program_file(bare=True)
    out["seccomp"] = str(program) if program is not None else None
    if not out["landlock"]:
        return out
    rules = grant(Path("/"), landlock.READ, hidden)  # the workspace's read-only entries are read through this
    rules += grant(ws, landlock.READ | landlock.WRITE, hidden + read_only)
    # the private TMPDIR, the agent's state, the run's hook folders (inside the read-only .nightshift/): named
    # writable by the caller, so granted whole even where a hidden folder holds them (a command's TMPDIR)
    rules += [(str(path), landlock.READ | landlock.WRITE) for path in writable if path != ws]
    rules += [(path, DEVICES) for path in WRITABLE_DEVICES if os.path.exists(path)]
    rules += [(node, DEVICES) for pattern in hardening.GPU_NODES for node in sorted(glob.glob(pattern))]
    rules += [(str(p), landlock.READ | landlock.WRITE) for p in SHARED_WRITABLE if p.is_dir()]
    rules.append(("/proc", landlock.READ | landlock.WRITE_FILE))
    scoped = (landlock.SCOPE_ABSTRACT_UNIX_SOCKET | landlock.SCOPE_SIGNAL) if tier.scopes else 0
    out.update(rules=rules, handled=landlock.handled(tier.abi), scoped=scoped)
    return out


def confine_argv(ns, tier: Tier, policy_file: Path, outputs=()) -> list[str]:
    """Writes the policy (outside, before the agent starts; not writable inside) and returns the launcher's argv,
    up to and including ``--`` (as bwrap_argv does): the command follows."""
    policy_file.write_text(json.dumps(policy(ns, tier, outputs)))
    os.chmod(policy_file, 0o600)
    return [*bare_argv("nightshift.supervisor.sandbox.confine", str(policy_file)), "--"]
