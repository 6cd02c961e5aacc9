"""`nightshift doctor`: what nightshift needs on this machine, each missing piece with the command that fixes it.
Secrets are reported as present or absent, never shown."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from supervisor.run.watch import NETWORK_FS, filesystem_type

PACKAGES = ("textual", "libtmux", "git", "watchdog", "anthropic", "pydantic", "numpy")


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 and (out.stdout or out.stderr) else None


def checks(workspace: Path) -> list[tuple[bool, str, str]]:
    """(ok, what, detail or fix) for each piece."""
    rows: list[tuple[bool, str, str]] = []
    claude = shutil.which("claude")
    version = _version(["claude", "--version"]) if claude else None
    rows.append((bool(version), "claude", f"{version} at {claude}" if version else
                 "not found: npm install -g @anthropic-ai/claude-code (or `make tools` as root)"))
    tmux = _version(["tmux", "-V"]) if shutil.which("tmux") else None
    rows.append((bool(tmux), "tmux", tmux or "not found: apt-get install tmux (or use --backend local)"))
    git = _version(["git", "--version"]) if shutil.which("git") else None
    rows.append((bool(git), "git", git or "not found: apt-get install git"))
    for name in PACKAGES:
        found = importlib.util.find_spec(name) is not None
        rows.append((found, f"python: {name}", "installed" if found else "missing: pip install -e . in the repo"))
    keys = [k for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN") if os.environ.get(k)]
    config_dir = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    logged_in = (config_dir / ".credentials.json").exists()
    rows.append((bool(keys) or logged_in, "credentials", f"{', '.join(keys)} set (value not shown)" if keys else
                 "a Claude login is present" if logged_in else
                 "no API key in the environment and no Claude login: export ANTHROPIC_API_KEY or run `claude` once"))
    api = bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))
    rows.append((True, "judge (via auto)", "through the API (a key is set)" if api else
                 "through the claude CLI: a CLI login is enough" if claude else
                 "unavailable: no API key and no claude CLI (never counted as a pass)"))
    fs = filesystem_type(workspace)
    rows.append((True, "workspace filesystem", f"{fs}: " + ("network filesystem, watching falls back to polling"
                                                          if fs in NETWORK_FS else "local, inotify watching")))
    rows += boundary_checks(workspace)
    sbatch = shutil.which("sbatch")
    rows.append((True, "slurm", f"CLI at {sbatch}" if sbatch else "no Slurm CLI (only needed for --backend slurm)"))
    return rows


def boundary_checks(workspace: Path) -> list[tuple[bool, str, str]]:
    """How the agent's boundary holds on this machine: which layer holds the shell, and root's one trap."""
    from supervisor.config.schema import ConfigError, load_config
    from supervisor.shift.policy import sandbox_problem

    try:
        config = load_config(workspace)
    except ConfigError as exc:
        config = None
        if (Path(workspace) / "nightshift.toml").exists():
            return [(False, "nightshift.toml", str(exc))]
    problem = sandbox_problem()
    required = config is not None and config.policy.sandbox == "required"
    rows = [(not (problem and required), "sandbox (agent's shell)",
             "bubblewrap works: the agent's shell cannot read held-out references, write outside the workspace "
             "and the temporary directory, or reach the network when [policy] network = false" if not problem else
             f"{problem}; the PreToolUse hook refuses what it can see in a command and the integrity check at "
             "every stop restores protected files" + (" ([policy] sandbox = \"required\": runs will not start)"
                                                        if required else ""))]
    from supervisor.sandbox.probe import bwrap_problem
    sealed = bwrap_problem()
    rows.append((True, "references vs oracle", "the oracle command runs with every reference (visible and held out) "
                 "absent (bubblewrap)" if not sealed else
                 f"{sealed}: visible references are moved aside while the oracle command runs; held-out references "
                 "are NOT protected from a solver run by the same user (a store readable only by another account, "
                 "or bubblewrap, would protect them); every verdict says so"))
    rows.append((True, "file tools", "Read/Write/Edit are held by nightshift's PreToolUse hook (every refusal is "
                                     "recorded as policy.denied and named in the next push-back)"))
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


def doctor_main(workspace: Path, slurm: bool = False) -> int:
    rows = checks(Path(workspace))
    for ok, what, detail in rows:
        print(f"{'ok ' if ok else 'MISSING'}  {what:22} {detail}")
    missing = [what for ok, what, _ in rows if not ok]
    print("everything nightshift needs is here" if not missing else f"missing: {', '.join(missing)}")
    if slurm:  # the compute node's environment is another machine's: ask a job (hpc/doctor.py)
        from hpc.doctor import slurm_doctor_main

        print("\n-- in a Slurm job --")
        job = slurm_doctor_main(Path(workspace))
        return job if job else (1 if missing else 0)
    return 1 if missing else 0
