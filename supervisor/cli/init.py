"""`nightshift init`: make a folder a nightshift workspace (CLAUDE.md, CHANGELOG.md, nightshift.toml, .gitignore).

Never overwrites an existing file without ``--force``; a plain folder becomes a git repository.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from supervisor import gitops
from supervisor.config.schema import CONFIG_NAME, parse_config
from supervisor.resources import render
from supervisor.errors import UserError

DEFAULT_PLAN = [
    "Understand the reference outputs and how to reproduce them (write it down in CHANGELOG.md)",
    "Build the first working version end to end",
    "Make every oracle comparison pass within tolerance",
    "Clean up: tests for the new code, notes current",
]


class InitError(UserError):
    pass


@dataclass
class InitOptions:
    goal: str = ""
    test_command: str = ""
    verify_commands: list[str] = field(default_factory=list)
    reference_dir: str = ""
    agent: str = "claude"
    plan: list[str] = field(default_factory=list)
    oracle_block: str = ""  # a ready [oracle] section (the demo supplies its own)
    force: bool = False


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings and lists of strings are valid TOML


def oracle_block_for(reference_dir: Path, workspace: Path) -> str:
    """An [oracle] section with one comparison per reference file, to be edited by the user."""
    files = sorted(p for p in (workspace / reference_dir).rglob("*") if p.is_file())
    if not files:
        return ""
    out = ['\n[oracle]\ncommand = ""              # the command that writes the candidate outputs\ntimeout = "30m"\n']
    for path in files:
        rel = path.relative_to(workspace)
        out.append(f'\n[[oracle.compare]]\nname = {_toml(path.stem)}\ncandidate = {_toml("out/" + path.name)}\n'
                   f'reference = {_toml(str(rel))}\nrtol = 1e-3\n')
    return "".join(out)


def init_workspace(workspace: Path, opts: InitOptions) -> list[str]:
    """Write the files; returns the names written. Raises InitError with a one-line message."""
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise InitError(f"{workspace} is not a folder; create it first or give an existing one")
    if opts.reference_dir and not (workspace / opts.reference_dir).is_dir():
        raise InitError(f"--reference-dir {opts.reference_dir}: no such folder in {workspace}")
    goal = opts.goal or "(state the goal here: what must be true, measured how)"
    oracle = opts.oracle_block or (oracle_block_for(Path(opts.reference_dir), workspace) if opts.reference_dir else "")
    files = {
        "CLAUDE.md": render("CLAUDE.md.template", goal=goal, test_command=opts.test_command or "(none yet)",
                            plan="\n".join(f"- [ ] {item}" for item in (opts.plan or DEFAULT_PLAN)),
                            reference_note=f" in `{opts.reference_dir}/`" if opts.reference_dir else ""),
        "CHANGELOG.md": render("CHANGELOG.md", date=dt.date.today().isoformat(), goal=goal),
        CONFIG_NAME: render("nightshift.toml", goal_toml=_toml(goal), agent_toml=_toml(opts.agent),
                            test_command_toml=_toml(opts.test_command), commands_toml=_toml(opts.verify_commands),
                            oracle_block=oracle),
    }
    parse_config(files[CONFIG_NAME], CONFIG_NAME)  # what we write must load
    existing = [name for name in files if (workspace / name).exists()]
    if existing and not opts.force:
        raise InitError(f"{workspace / existing[0]} already exists; use --force to overwrite it")
    repo = gitops.open_repo(workspace, create=True)
    for name, text in files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    gitignore = workspace / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.exists() else []
    if ".nightshift/" not in lines:
        gitignore.write_text("\n".join(lines + [".nightshift/"]) + "\n")
    gitops.exclude_state_dir(repo)
    config = parse_config(files[CONFIG_NAME], CONFIG_NAME)
    if config.oracle is not None and config.oracle.compare:
        # Hash the references now, so a change made before the first run is caught too.
        from supervisor.verify.oracle import protect_references
        from supervisor.run.paths import make_private_dir, workspace_state_dir
        store = make_private_dir(workspace_state_dir(workspace) / "references")
        protect_references(config.oracle, workspace, store)
    return [*files, ".gitignore"]
