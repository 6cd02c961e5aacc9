"""The sbatch script of a job, rendered from templates/sbatch.sh.template and the [slurm] config.

The script is kept in the run directory so a user can read exactly what was submitted. It runs the work in
the background and waits in a loop (so the USR1 trap fires before the limit), and writes its own exit status
into a file on EXIT. No secret is ever written into it: credentials reach the job through the environment
that sbatch propagates, and rendering refuses a script that contains the value of a secret variable.
"""
from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.errors import SlurmError
from nightshift.supervisor.resources import template_path

TEMPLATE = "sbatch.sh.template"
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)


class ShellWord(str):
    """A value put into the script as it is, already quoted for bash (e.g. a path that names
    ``${SLURM_ARRAY_TASK_ID}``, so each task of an array writes its own file); any other value is quoted."""


def _word(value) -> str:
    return str(value) if isinstance(value, ShellWord) else shlex.quote(str(value))


@dataclass(frozen=True)
class BatchJob:
    """One job to render: what runs, where, and the files it writes."""

    job_name: str
    work: str  # the shell command line the job runs (e.g. "bash /run/shifts/1/t1.sh")
    workdir: Path
    log_file: Path  # the job's stdout and stderr (appended across requeues)
    status_file: Path | ShellWord  # JSON written on EXIT: {"exit", "signal", "job", "restarts", "ended"}
    signal_file: Path | ShellWord  # epoch seconds written when USR1 arrives
    description: str = ""
    forward_usr1: bool = False  # pass the walltime signal on to the work (the supervisor inside a job)


def _resource_lines(config: SlurmConfig) -> list[str]:
    lines = []
    for option, value in (("partition", config.partition), ("account", config.account), ("qos", config.qos),
                          ("mem", config.memory), ("gres", config.gres)):
        if value:
            lines.append(f"#SBATCH --{option}={value}")
    for extra in config.extra:
        extra = extra.strip()
        lines.append(extra if extra.startswith("#SBATCH") else f"#SBATCH {extra}")
    return lines


def _environment_lines(config: SlurmConfig) -> list[str]:
    """[slurm] modules, setup and env, in that order: everything the job runs (the agent, and the oracle when
    the supervisor runs in the job) sees them, as it sees the user's own shell interactively. A module that
    does not load ends the job with the reason in its log, rather than an agent working without it."""
    lines = [f"module load {shlex.quote(module)} || {{ echo \"nightshift: 'module load {module}' failed in the job; "
             f"check [slurm] modules (nightshift doctor --slurm)\" >&2; exit 3; }}" for module in config.modules]
    if config.setup:
        lines.append(config.setup)
    for name, value in config.env.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SlurmError(f"[slurm] env: {name!r} is not a shell variable name; use letters, digits and _")
        if SECRET_NAME.search(name):
            raise SlurmError(f"[slurm] env: {name} looks like a secret; export it in your shell instead (sbatch "
                             "passes it to the job) so it is never written into the script")
        lines.append(f"export {name}={shlex.quote(value)}")
    return lines or ["# (no modules, setup or env in [slurm])"]


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{{name}}``; a placeholder without a value is a bug in nightshift, not a user error."""
    missing = sorted(set(PLACEHOLDER.findall(template)) - set(values))
    if missing:
        raise KeyError(f"sbatch template placeholders without a value: {', '.join(missing)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def render_script(config: SlurmConfig, job: BatchJob) -> str:
    values = {
        "description": job.description or job.job_name,
        "job_name": job.job_name,
        "workdir": str(job.workdir),
        "log_file": str(job.log_file),
        "grace": str(max(1, int(config.grace))),
        "time": config.time,
        "cpus": str(config.cpus),
        "resource_lines": "\n".join(_resource_lines(config)),
        "environment_lines": "\n".join(_environment_lines(config)),
        "status_file": _word(job.status_file),
        "signal_file": _word(job.signal_file),
        "on_usr1": 'kill -USR1 "$work_pid" 2>/dev/null' if job.forward_usr1 else ": # the supervisor reads signal_file",
        "work": job.work,
    }
    text = fill(template_path(TEMPLATE).read_text(encoding="utf-8"), values)
    refuse_secrets(text)
    return text


def refuse_secrets(text: str, environ: dict[str, str] | None = None) -> None:
    """Raise when the script would hold the value of a secret variable of this environment."""
    for name, value in (environ if environ is not None else os.environ).items():
        if SECRET_NAME.search(name) and len(value) >= 8 and value in text:
            raise SlurmError(f"the sbatch script would contain the value of ${name} (check [slurm] setup and extra); "
                             "secrets reach the job through the environment, never the script")


def write_script(config: SlurmConfig, job: BatchJob, path: Path) -> Path:
    """Render and write the script (0700, by rename); the path."""
    text = render_script(config, job)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o700)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def read_status(path: Path) -> dict | None:
    """The job's own record of how it ended, or None when it has not ended (or never started)."""
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
