"""A run's Boundary: what every process of the agent's code may see, write and reach, derived from nightshift.toml
once (the references, the held-out ones, the stores, [policy]); the turn and each command add only what is theirs.

Also the problems that make a boundary impossible or weaker, as one-line messages with their fix: a held-out
reference inside the workspace (the agent reads it, and git keeps it), held-out comparisons where no namespace can
be made (fail closed unless ``[policy] heldout = "unprotected"``), a reference that is a symlink out of the workspace.
"""
from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.config import CONFIG_NAME
from nightshift.supervisor.gitguard import control_paths
from nightshift.supervisor.run.paths import STATE_DIR_NAME, user_state_dir
from nightshift.supervisor.sandbox.hardening import MUNGE_SOCKET, credential_places
from nightshift.supervisor.sandbox.probe import namespace_problem, open_parts
from nightshift.supervisor.sandbox.tier import Tier, refusal, tier_for

# The part of the sandbox that closes each surface the probes measure (survey.py): where the machine lacks that part,
# the surface stays open, and accepting the part's door ([policy] open_doors) accepts the surface with it.
SURFACE_DOORS = {"capabilities": "userns", "mounts": "seccomp", "TIOCSTI": "seccomp", "syscalls": "seccomp",
                 "abstract sockets": "landlock"}

if TYPE_CHECKING:  # the schema loads pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.schema import Config


def _path(workspace: Path, text: str) -> Path:
    return (workspace / Path(text.split(":", 1)[0]).expanduser()).resolve()


@dataclass(frozen=True)
class Boundary:
    workspace: Path
    mode: str  # [policy] sandbox
    hidden: tuple[Path, ...]  # absent for every process of the agent's code
    references: tuple[Path, ...]  # visible references: read-only; absent for the oracle command too
    links: tuple[Path, ...]  # references as configured where they are symlinks (the link is hidden as well)
    read_only: tuple[Path, ...]  # passed tests, nightshift.toml, .nightshift/, [policy] protect
    heldout: tuple[Path, ...]  # the held-out references as configured
    network: bool  # the agent's own ([policy] network)
    command_network: bool  # the test, verify and oracle commands' ([policy] command_network)
    unprotected_ok: bool  # [policy] heldout = "unprotected"
    run_root: Path | None = None
    agent_state: tuple[Path, ...] = field(default_factory=tuple)
    deny_read: tuple[Path, ...] = field(default_factory=lambda: tuple(credential_places()))  # credential places
    sockets: tuple[Path, ...] = ()  # host sockets reachable inside ([policy] sockets; munge's for a Slurm run)
    open_doors: tuple[str, ...] = ()  # parts of the sandbox accepted missing ([policy] open_doors)
    outputs: tuple[Path, ...] = ()  # the folders the oracle writes its candidates to (confinement.py makes them)

    @property
    def missing(self) -> list[tuple[str, str]]:
        """(door, why and the fix) for each part of the sandbox this machine does not give."""
        return open_parts(self.mode, shared_network=self.network or self.command_network)

    @property
    def problem(self) -> str | None:
        """Why no namespace is made here (None: every process of the agent's code runs in one)."""
        return namespace_problem(self.mode)

    @property
    def tier(self) -> Tier:
        """The strongest boundary this machine gives under [policy] sandbox (tier.py: the one place it is decided)."""
        return tier_for(self.mode)

    def scratch(self) -> Path:
        """Where private TMPDIRs are made: the run's own folder (0700), else the user's state folder."""
        base = self.run_root / "tmp" if self.run_root is not None else user_state_dir() / "tmp"
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        return base

    def for_commands(self) -> list[Path]:
        """What a command hides besides the held-out data: the agent's own TMPDIRs (a file left there is no way in)."""
        return [self.run_root / "tmp"] if self.run_root is not None else []


def git_controls(workspace: Path) -> list[Path]:
    """The repository's control files that exist (config, hooks/, info/, ...: gitguard.control_paths): read-only
    inside, so nothing the agent plants there runs in nightshift's git or the user's."""
    try:
        return [p for p in control_paths(workspace) if p.exists()]
    except OSError:
        return []


def boundary_for(workspace: Path, config: Config, run_root: Path | None = None,
                 protected: list[Path] | tuple[Path, ...] = ()) -> Boundary:
    """The one place a nightshift.toml becomes what the agent's code may see and reach: the turns and every command
    (the oracle command's in check, the preflight, `nightshift compare`, the verdict and `verify-result --rerun`), so a
    [policy] setting holds alike in each. ``config``: the validated model, or compare's cached view of the same
    sections (config/oracle_view.py). ``protected``: the files of tests that have passed once (read-only like the
    references)."""
    ws = Path(workspace).resolve()
    comps = config.oracle.compare if config.oracle else []
    configured = [(ws / Path(c.reference.split(":", 1)[0]).expanduser()) for c in comps if not c.heldout]
    references = [_path(ws, c.reference) for c in comps if not c.heldout]
    heldout = [_path(ws, c.reference) for c in comps if c.heldout]
    hidden = list(heldout) + ([user_state_dir() / "heldout"] if heldout else [])
    hidden += [ws / STATE_DIR_NAME / "references"] + ([run_root / "references"] if run_root is not None else [])
    heldout_tests = heldout_tests_hidden(config)
    heldout += heldout_tests  # fail closed and probed like the held-out references
    hidden += [Path(p).expanduser().resolve() for p in config.policy.hide] + heldout_tests
    read_only = [ws / CONFIG_NAME, ws / STATE_DIR_NAME, *[Path(p) for p in protected], *git_controls(ws)]
    for pattern in config.policy.protect:
        read_only += [Path(p).resolve() for p in glob.glob(str(ws / pattern), recursive=True)]
    return Boundary(workspace=ws, mode=config.policy.sandbox, hidden=tuple(hidden), references=tuple(references),
                    links=tuple(p for p in configured if p.is_symlink()), read_only=tuple(read_only),
                    heldout=tuple(heldout), network=config.policy.network,
                    command_network=config.policy.command_network,
                    unprotected_ok=config.policy.heldout == "unprotected", run_root=run_root,
                    agent_state=tuple(Path(p).expanduser() for p in config.policy.agent_state),
                    deny_read=tuple(credential_places(config.policy.deny_read, config.policy.allow_read)),
                    sockets=tuple(_sockets(config)), open_doors=tuple(config.policy.open_doors),
                    outputs=outputs_of(ws, comps))


def outputs_of(ws: Path, comps) -> tuple[Path, ...]:
    """The folders of the candidates, inside the workspace (a candidate elsewhere is the user's business)."""
    folders = {(ws / Path(c.candidate.split(":", 1)[0]).expanduser()).parent for c in comps}
    return tuple(sorted(f for f in folders if f != ws and f.is_relative_to(ws)))


def _sockets(config: Config) -> list[Path]:
    """The sockets a run names, and munge's where the agent runs in Slurm jobs or the oracle command starts its
    ranks with Slurm (``srun`` inside an allocation signs its requests through munge)."""
    named = [Path(p).expanduser() for p in config.policy.sockets]
    if (config.backend.kind == "slurm" or uses_slurm(config)) and MUNGE_SOCKET not in named:
        named.append(MUNGE_SOCKET)
    return named


def uses_slurm(config: Config) -> bool:
    """Does the oracle command name a Slurm launcher as a word of its own (``srun -n 2 ./solver``)?"""
    command = (config.oracle.command or "") if config.oracle is not None else ""
    return bool(re.search(r"(?<![\w./-])(?:srun|salloc)(?![\w.-])", command))


def heldout_tests_hidden(config: Config) -> list[Path]:
    """`init --holdout-tests` (issue #36): the private store of held-out tests and of their reports."""
    store = config.verify.heldout_tests
    return [Path(store).expanduser().resolve()] if store else []


def boundary_for_oracle(workspace: Path, oracle, mode: str = "auto") -> Boundary:
    """A boundary from the oracle's own declarations and [policy]'s defaults, where there is no config beyond
    [oracle] (`doctor` without a nightshift.toml, a caller of run_oracle that gives no boundary)."""
    ws = Path(workspace).resolve()
    comps = oracle.compare if oracle else []
    configured = [(ws / Path(c.reference.split(":", 1)[0]).expanduser()) for c in comps if not c.heldout]
    heldout = [_path(ws, c.reference) for c in comps if c.heldout]
    hidden = list(heldout) + ([user_state_dir() / "heldout"] if heldout else []) + [ws / STATE_DIR_NAME / "references"]
    return Boundary(workspace=ws, mode=mode, hidden=tuple(hidden),
                    references=tuple(_path(ws, c.reference) for c in comps if not c.heldout),
                    links=tuple(p for p in configured if p.is_symlink()),
                    read_only=(ws / CONFIG_NAME, ws / STATE_DIR_NAME, *git_controls(ws)), heldout=tuple(heldout),
                    network=True,
                    command_network=False, unprotected_ok=False, outputs=outputs_of(ws, comps))


def start_problems(boundary: Boundary) -> list[str]:
    """Why a run with this boundary must not start (fail closed), each a line with its fix."""
    out = []
    for path in boundary.heldout:
        if path.is_relative_to(boundary.workspace):
            rel = path.relative_to(boundary.workspace)
            out.append(f"held-out reference {rel} is inside the workspace, where the agent can read it (and git may "
                       "keep it): move it out of the workspace (e.g. `nightshift init --holdout NAME` keeps it in "
                       "nightshift's private store) and point its reference = at the new place")
    problem = boundary.problem
    tier = boundary.tier
    if boundary.heldout and problem and not tier.hides_files and not boundary.unprotected_ok:
        out.append(f"held-out comparisons cannot be protected here ({problem}): any process of the agent could "
                   "read the held-out references; fix that (`nightshift doctor` says how), or accept it with "
                   "[policy] heldout = \"unprotected\" in nightshift.toml")
    if boundary.heldout and not problem:
        for door, why in boundary.missing:
            if door not in boundary.open_doors:
                out.append(f"held-out comparisons need the whole sandbox, and {why}; fix that, or accept the door "
                           f"with [policy] open_doors = [\"{door}\"] in nightshift.toml")
    refused = refusal(boundary.mode, tier)
    if refused:
        out.append(refused)
    return out


def surface_door(boundary: Boundary, surface: str) -> str | None:
    """The missing part (its door's name) that leaves ``surface`` open on this machine, or None."""
    door = SURFACE_DOORS.get(surface)
    return door if door in {name for name, _why in boundary.missing} else None


def notes(boundary: Boundary) -> list[str]:
    """What the user should know about this boundary that does not stop a run (a line each)."""
    out = []
    for link in boundary.links:
        target = link.resolve()
        if not target.is_relative_to(boundary.workspace):
            rel = link.relative_to(boundary.workspace) if link.is_relative_to(boundary.workspace) else link
            out.append(f"reference {rel} is a symlink to {target}, outside the workspace: nightshift hides and "
                       "protects the file it points to; copy it into the workspace to keep the run self-contained")
    return out


def open_doors(boundary: Boundary, agent_kind: str) -> list[str]:
    """Without a namespace, which doors are open for this agent (empty when a namespace holds every process)."""
    problem = boundary.problem
    if problem is None:
        return [f"the sandbox lacks a part ({door}): {why}" for door, why in boundary.missing]
    tier = boundary.tier
    if tier.confined:  # no namespace, but Landlock and/or seccomp around every process of the agent's code
        offline = [] if boundary.network and boundary.command_network else [
            f"[policy] network = false / command_network = false are not held in {tier.label()}: without a network "
            "namespace the agent's processes reach the machine's network (name it to your administrators as part "
            "of the namespace's fix)"]
        return [f"no namespace ({problem}): {tier.label()} holds the agent's processes; left open: "
                + "; ".join(tier.left_open())] + offline
    doors = ["the test and verify commands run unsealed: they can read held-out references and leave files "
             "that a later command reads",
             "processes the agent starts can outlive its turn"]
    if agent_kind == "claude":
        doors.insert(0, "Claude Code's tools are held by the PreToolUse hook and the after-the-fact check only "
                        "(set [policy] claude_sandbox = true for its shell sandbox where bubblewrap runs)")
    else:
        doors.insert(0, f"the {agent_kind} agent's shell can read held-out references and write protected files "
                        "(restored and named after the fact)")
    return [f"no namespace ({problem}): " + door for door in doors]
