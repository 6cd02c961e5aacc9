"""`nightshift init`: make a folder a nightshift workspace (CLAUDE.md, CHANGELOG.md, nightshift.toml, .gitignore).

With ``--reference-dir`` the [oracle] section comes from what the references hold (cli/init_references.py).
Never overwrites an existing file without ``--force``; a plain folder becomes a git repository. The references
are fingerprinted (cheap at any size) and, up to ``COPY_LIMIT`` in all, hashed and copied, so a change made
before the first run is found by `nightshift check` and undone when the run starts.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor import gitops
from nightshift.supervisor.cli.init.judge_choice import JudgeChoice, choose_judge
from nightshift.supervisor.cli.init.references import oracle_section, survey_references
from nightshift.supervisor.cli.init.survey import Survey
from nightshift.supervisor.config.schema import CONFIG_NAME, parse_config
from nightshift.supervisor.resources import render
from nightshift.supervisor.errors import UserError

DEFAULT_PLAN = [
    "Understand the reference outputs and how to reproduce them (write it down in CHANGELOG.md)",
    "Build the first working version end to end",
    "Make every oracle comparison pass within tolerance",
    "Clean up: tests for the new code, notes current",
]
COPY_LIMIT = 64 << 20  # bigger reference sets are hashed and copied when the run starts, not at init (~1 s)


class InitError(UserError):
    pass


@dataclass
class InitOptions:
    goal: str = ""
    test_command: str = ""
    verify_commands: list[str] = field(default_factory=list)
    reference_dir: str = ""
    candidate_dir: str = "out"
    survey: Survey | None = None  # what was found in reference_dir (looked at once, shown, then written)
    agent: str = "claude"
    plan: list[str] = field(default_factory=list)
    oracle_block: str = ""  # a ready [oracle] section (the demo supplies its own)
    force: bool = False
    holdout: str = ""  # --holdout NAME[,NAME] or N: data sets moved into nightshift's private store
    moves: dict[str, Path] = field(default_factory=dict)  # what --holdout moves (file -> its private place)
    notes: list[str] = field(default_factory=list)  # what the user should know about what init did
    judge: JudgeChoice | None = None  # whether a judge runs at claims (judge_choice.py); chosen by init_workspace
    holdout_tests: list[str] = field(default_factory=list)  # --holdout-tests: tests moved into the private store


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings and lists of strings are valid TOML


def survey_for(workspace: Path, opts: InitOptions) -> Survey | None:
    """What the reference folder holds; InitError when it holds no data file at all."""
    if not opts.reference_dir:
        if opts.holdout:
            raise InitError("--holdout needs --reference-dir DIR: the data sets to hold out are chosen from it")
        return None
    if opts.survey is not None:
        return opts.survey
    if opts.holdout and not (workspace / opts.reference_dir).is_dir():
        raise InitError(f"--holdout needs --reference-dir: {opts.reference_dir or '(none given)'} is not a folder "
                        f"of {workspace}")
    if not (workspace / opts.reference_dir).is_dir():
        raise InitError(f"--reference-dir {opts.reference_dir}: no such folder in {workspace}")
    survey = survey_references(workspace, opts.reference_dir, opts.candidate_dir, opts.goal)
    if not survey.comparisons:
        skipped = "; ".join(f"{rel} ({why})" for rel, why in survey.skipped[:4]) or "it is empty"
        raise InitError(f"--reference-dir {opts.reference_dir}: no data file to compare ({skipped}); the oracle "
                        "needs reference outputs: text tables, CSV/TSV, .npy/.npz, HDF5 or JSON")
    if opts.holdout:
        from nightshift.supervisor.cli.init.holdout import choose, plan
        opts.moves = plan(workspace, survey, choose(survey, opts.holdout, opts.reference_dir))
    return survey


def init_workspace(workspace: Path, opts: InitOptions) -> list[str]:
    """Write the files; returns the names written. Raises InitError with a one-line message."""
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise InitError(f"{workspace} is not a folder; create it first or give an existing one")
    goal = opts.goal or "(state the goal here: what must be true, measured how)"
    held_plan = {}
    if opts.holdout_tests:  # refused before anything is written
        from nightshift.supervisor.cli.init.holdout_tests import plan_tests
        held_plan = plan_tests(workspace, opts.holdout_tests)
    survey = None if opts.oracle_block else survey_for(workspace, opts)
    oracle = opts.oracle_block or (oracle_section(survey) if survey else "")
    opts.judge = opts.judge or choose_judge()
    files = {
        "CLAUDE.md": render("CLAUDE.md.template", goal=goal, test_command=opts.test_command or "(none yet)",
                            plan="\n".join(f"- [ ] {item}" for item in (opts.plan or DEFAULT_PLAN)),
                            reference_note=f" in `{opts.reference_dir}/`" if opts.reference_dir else ""),
        "CHANGELOG.md": render("CHANGELOG.md", date=dt.date.today().isoformat(), goal=goal),
        CONFIG_NAME: render("nightshift.toml", goal_toml=_toml(goal), agent_toml=_toml(opts.agent),
                            test_command_toml=_toml(opts.test_command), commands_toml=_toml(opts.verify_commands),
                            oracle_block=oracle, judge_block=opts.judge.block(),
                            heldout_tests_line=_heldout_tests_line(workspace, opts)),
    }
    parse_config(files[CONFIG_NAME], CONFIG_NAME)  # what we write must load
    existing = [name for name in files if (workspace / name).exists()]
    if existing and not opts.force:
        raise InitError(f"{workspace / existing[0]} already exists; use --force to overwrite it")
    repo = gitops.open_repo(workspace, create=True)
    if opts.moves:  # last, after every check that can refuse: the held-out references leave the workspace
        from nightshift.supervisor.cli.init.holdout import move
        opts.notes += move(workspace, opts.moves)
    if opts.holdout_tests:
        from nightshift.supervisor.cli.init.holdout_tests import move_tests
        opts.notes += move_tests(workspace, held_plan)
    for name, text in files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    gitignore = workspace / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.exists() else []
    if ".nightshift/" not in lines:
        gitignore.write_text("\n".join(lines + [".nightshift/"]) + "\n")
    gitops.exclude_state_dir(repo)
    config = parse_config(files[CONFIG_NAME], CONFIG_NAME)
    if config.oracle is not None and config.oracle.compare:
        guard_references(config.oracle, workspace)
    return [*files, ".gitignore"]


def _heldout_tests_line(workspace: Path, opts: InitOptions) -> str:
    if not opts.holdout_tests:
        return ""
    from nightshift.supervisor.cli.init.holdout_tests import store_for
    return (f"heldout_tests = {_toml(str(store_for(workspace)))}   # run at a claim of done over the candidate; "
            "the agent never sees them\n")


def reference_files(oracle, workspace: Path) -> dict[str, Path]:
    """Each visible reference file of the comparisons (spec without its part -> path)."""
    from nightshift.supervisor.verify.oracle.integrity import resolve
    from nightshift.supervisor.verify.oracle.readers import split_part

    found = {}
    for comp in oracle.compare:
        if not comp.heldout:
            rel = split_part(comp.reference)[0]
            found[rel] = resolve(workspace, rel)
    return found


def guard_references(oracle, workspace: Path) -> None:
    """Fingerprint the references now, and hash and copy them when they are small enough to do it quickly."""
    from nightshift.supervisor.run.paths import make_private_dir, workspace_state_dir
    from nightshift.supervisor.verify.oracle import protect_references
    from nightshift.supervisor.verify.oracle.fingerprint import record_fingerprints

    store = make_private_dir(workspace_state_dir(workspace) / "references")
    files = reference_files(oracle, workspace)
    record_fingerprints(files, store)
    if sum(p.stat().st_size for p in files.values() if p.is_file()) <= COPY_LIMIT:
        protect_references(oracle, workspace, store)
