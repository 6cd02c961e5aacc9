"""`nightshift doctor`: what nightshift needs on this machine, each missing piece with the command that fixes it.
Secrets are reported as present or absent, never shown."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from nightshift.supervisor.agents.credentials import find_credentials, judge_reach
from nightshift.supervisor.run.watch import NETWORK_FS, filesystem_type

PACKAGES = ("textual", "libtmux", "git", "watchdog", "anthropic", "pydantic", "numpy")


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 and (out.stdout or out.stderr) else None


def _agent_kind(workspace: Path) -> str:
    """The configured agent (Claude Code where nightshift.toml is missing or does not load: init's default)."""
    from nightshift.supervisor.config.schema import ConfigError, load_config

    try:
        return load_config(workspace).agent.kind
    except ConfigError:
        return "claude"


def checks(workspace: Path) -> list[tuple[bool | None, str, str]]:
    """(ok, what, detail or fix) for each piece; ok None: a warning (it works, weaker than it should)."""
    rows: list[tuple[bool | None, str, str]] = []
    kind = _agent_kind(workspace)
    needs_claude = kind == "claude"  # Claude Code's CLI and credentials: only its agent needs them (the judge's row)
    claude = shutil.which("claude")
    version = _version(["claude", "--version"]) if claude else None
    rows.append((bool(version) or not needs_claude, "claude", f"{version} at {claude}" if version else
                 "not found: npm install -g @anthropic-ai/claude-code (or `make tools` as root)"
                 + ("" if needs_claude else f"; the {kind} agent does not need it (the judge does)")))
    tmux = _version(["tmux", "-V"]) if shutil.which("tmux") else None
    rows.append((bool(tmux), "tmux", tmux or "not found: apt-get install tmux (or use --backend local)"))
    git = _version(["git", "--version"]) if shutil.which("git") else None
    rows.append((bool(git), "git", git or "not found: apt-get install git"))
    for name in PACKAGES:
        found = importlib.util.find_spec(name) is not None
        rows.append((found, f"python: {name}", "installed" if found else "missing: pip install -e . in the repo"))
    credentials = find_credentials()
    rows.append((bool(credentials) or not needs_claude, "credentials", credentials.describe()
                 + ("" if credentials or needs_claude else f" (the {kind} agent needs none)")))
    problem, way, with_what = judge_reach("auto", "claude")  # the rule init and check use
    rows.append((True, "judge (via auto)", f"unavailable: {problem} (never counted as a pass)" if problem else
                 f"through {way} ({with_what})"))
    fs = filesystem_type(workspace)
    rows.append((True, "workspace filesystem", f"{fs}: " + ("network filesystem, watching falls back to polling"
                                                          if fs in NETWORK_FS else "local, inotify watching")))
    rows += boundary_checks(workspace)
    rows += surface_rows(*_probed_boundary(workspace))
    from nightshift.supervisor.cli.watch.cron import watchdog_status
    installed, detail = watchdog_status()
    rows.append((True, "watchdog", ("installed: " if installed else "not installed: ") + detail))
    from nightshift.supervisor.cli.watch import systemd as systemd_watchdog
    installed, detail = systemd_watchdog.status()
    rows.append((True, "watchdog (systemd)", ("installed: " if installed else "not installed: ") + detail))
    rows.append((True, "linger", systemd_watchdog.linger_line()))
    sbatch = shutil.which("sbatch")
    rows.append((True, "slurm", f"CLI at {sbatch}" if sbatch else "no Slurm CLI (only needed for --backend slurm)"))
    return rows


def file_tools_line(agent: str, namespace_problem: str | None, confined: str | None = None) -> str:
    """What holds the agent's file edits: Claude Code's tools go through nightshift's PreToolUse hook; any other
    agent has no hook, so only the namespace (where it runs) and the check at each stop hold them."""
    if agent == "claude":
        return ("Claude Code's Read/Write/Edit are held by nightshift's PreToolUse hook (every refusal is recorded as "
                "policy.denied and named in the next push-back)")
    held = ("nightshift's namespace (references and passed tests read-only) and the check at each stop"
            if namespace_problem is None else f"{confined} (references and passed tests read-only) and the check "
            "at each stop" if confined else "only the check at each stop (no namespace here: see the row above)")
    return f"the {agent} agent has no tool-call hook (that is Claude Code's): its writes are held by {held}"


def boundary_checks(workspace: Path) -> list[tuple[bool, str, str]]:
    """How the agent's boundary holds on this machine: which layer holds the shell, and root's one trap."""
    from nightshift.supervisor.config.schema import ConfigError, load_config
    from nightshift.supervisor.shift.policy import sandbox_problem

    try:
        config = load_config(workspace)
    except ConfigError as exc:
        config = None
        if (Path(workspace) / "nightshift.toml").exists():
            return [(False, "nightshift.toml", str(exc))]
    from nightshift.supervisor.sandbox.boundary import boundary_for, open_doors, start_problems
    from nightshift.supervisor.sandbox.probe import bwrap_problem
    from nightshift.supervisor.sandbox.tier import refusal, tier_for

    boundary = boundary_for(Path(workspace), config) if config is not None else None
    problem = boundary.problem if boundary is not None else bwrap_problem()  # [policy] sandbox = "off" says so too
    held = boundary is not None and bool(boundary.heldout)
    doors = open_doors(boundary, config.agent.kind) if boundary is not None else []
    tier = boundary.tier if boundary is not None else tier_for("auto")
    refused = refusal(config.policy.sandbox, tier) if config is not None else None  # [policy] sandbox's least tier
    unprotected = held and not boundary.unprotected_ok and not tier.hides_files  # held-out data readable: held
    ok = False if problem and (refused or unprotected) else (None if problem else True)  # weaker: a warning
    why = (f" (runs will not start: {refused})" if refused else
           " (held-out comparisons: runs will not start; [policy] heldout = \"unprotected\" accepts it)"
           if unprotected else "")
    rows = [(ok, "namespace",
             "bubblewrap works: every turn of the agent and every command that runs its code (tests, verify, oracle) "
             "runs in nightshift's namespace (held-out references absent, references and passed tests read-only, a "
             "private TMPDIR, nothing outlives its turn, no network unless [policy] allows it)" if not problem else
             f"{tier.label()}: {problem}: " + ("; ".join(doors) if doors else "no namespace for the agent or its "
                                                                              "commands") + why)]
    if boundary is not None and problem is None:  # without a namespace the row above says it (and why runs stop)
        rows += [(False, "held-out data", line) for line in start_problems(boundary)]
    if config is not None and config.policy.claude_sandbox:
        second = sandbox_problem()
        rows.append((True, "claude sandbox", "Claude Code's own sandbox runs inside the namespace as a second layer (its turns may make user and mount "
                     "namespaces of their own; the mounts they inherit stay locked)"
                     if not second else f"{second}; [policy] claude_sandbox is on but cannot run"))
    rows.append((True, "file tools", file_tools_line(config.agent.kind if config is not None else "claude", problem,
                                                     tier.label() if tier.hides_files else None)))
    if config is not None and config.agent.kind == "claude":
        from nightshift.supervisor.shift.pretool_transport import pretool_transport

        rows.append((True, "tool-call hook", pretool_transport(config).line()))
    bypass = config is not None and (config.agent.permission_mode == "bypassPermissions" or
                                     "--dangerously-skip-permissions" in config.agent.extra_args)
    if os.getuid() == 0:
        rows.append((not (bypass and not os.environ.get("IS_SANDBOX")), "root",
                     "running as root: Claude Code refuses bypassPermissions / --dangerously-skip-permissions as root "
                     "unless IS_SANDBOX=1 is set; nightshift never needs bypass mode (the default dontAsk mode with the "
                     "run's rules needs no prompt)" + ("; remove it from [agent]" if bypass else "")))
    elif bypass:
        rows.append((True, "permission mode", "bypass mode is set in [agent]: nightshift does not need it; the "
                                               "hook's refusals and the sandbox still hold"))
    return rows


def _probed_boundary(workspace: Path):
    """The boundary the run will use (the oracle's defaults where nightshift.toml is missing or does not load: its
    error is boundary_checks' row), and whether its turns run Claude Code's own sandbox inside."""
    from nightshift.supervisor.config.schema import ConfigError, load_config
    from nightshift.supervisor.sandbox.boundary import boundary_for, boundary_for_oracle

    try:
        config = load_config(workspace)
    except ConfigError:
        return boundary_for_oracle(Path(workspace), None), False
    return boundary_for(Path(workspace), config), config.policy.claude_sandbox and config.agent.kind == "claude"


def surface_rows(boundary, nested: bool = False) -> list[tuple[bool, str, str]]:
    """The sandbox probed from inside the namespace the run will use: a row per surface and per part the machine
    lacks, shown, never missing in itself (a part a run with held-out data cannot go without is start_problems'
    row). Doctor's alone: check's preflight probes the surfaces once itself."""
    from nightshift.supervisor.sandbox.survey import survey_lines

    parts = [(None, "sandbox part", f"{door}: {why}") for door, why in boundary.missing if door != "namespace"]
    return parts + [(True if line.startswith("closed") else None, "sandbox", line)
                    for line in survey_lines(boundary, nested=nested)]


def doctor_main(workspace: Path, slurm: bool = False) -> int:
    rows = checks(Path(workspace))
    for ok, what, detail in rows:
        print(f"{'ok ' if ok else 'WARN   ' if ok is None else 'MISSING'}  {what:22} {detail}")
    missing = [what for ok, what, _ in rows if ok is False]
    warned = sorted({what for ok, what, _ in rows if ok is None})
    if missing:
        print(f"missing: {', '.join(missing)}")
    elif warned:
        print(f"nightshift can run here, with warnings ({', '.join(warned)}): see the WARN rows for their fixes")
    else:
        print("everything nightshift needs is here")
    if slurm:  # the compute node's environment is another machine's: ask a job (hpc/doctor.py)
        from nightshift.hpc.doctor import slurm_doctor_main

        print("\n-- in a Slurm job --")
        job = slurm_doctor_main(Path(workspace))
        return job if job else (1 if missing else 0)
    return 1 if missing else 0
