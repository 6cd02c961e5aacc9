"""Where a verdict was reached: nightshift's, Python's and numpy's versions (and nightshift's source by digest), the
agent's CLI, its version and model id, the oracle command's interpreter and packages, the OS,
the CPU model, the Slurm job and node (the verified turn's job from the run's log, and the job this process runs
in), and the image digest of an Apptainer/Singularity container this process runs in.

Versions come from package metadata (numpy is not imported); the agent CLI is asked `--version` only for Claude
Code, whose binary the user configured; nothing of the workspace is run.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.digests import sha256_path
from nightshift.supervisor.version import version as nightshift_version


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _cli_version(binary: str) -> str | None:
    path = shutil.which(binary)
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout.strip()
    return text.splitlines()[0][:200] if out.returncode == 0 and text else None


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"') + f" ({platform.system()} {platform.release()})"
    except OSError:
        pass
    return platform.platform()


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "cpu model", "processor\t: ")) and ":" in line:
                value = line.split(":", 1)[1].strip()
                if value and not value.isdigit():
                    return value
    except OSError:
        pass
    return platform.processor() or None


def _container() -> dict[str, Any] | None:
    """The Apptainer/Singularity image this process runs in, by the variables the runtime sets."""
    image = os.environ.get("APPTAINER_CONTAINER") or os.environ.get("SINGULARITY_CONTAINER")
    if not image:
        return None
    runtime = "apptainer" if os.environ.get("APPTAINER_CONTAINER") else "singularity"
    out: dict[str, Any] = {"runtime": runtime, "image": image, "sha256": None}
    try:
        out["sha256"] = sha256_path(Path(image))[0]
    except OSError as exc:  # a sandbox folder, or an image not visible inside: named, not guessed
        out["note"] = f"image not readable from inside the container ({exc.strerror or exc})"
    return out


def _slurm(state: dict[str, Any], job: dict[str, Any]) -> dict[str, Any] | None:
    here = os.environ.get("SLURM_JOB_ID")
    if not job.get("job_id") and not here:
        return None
    return {"job_id": str(job["job_id"]) if job.get("job_id") else None, "node": job.get("node"),
            "jobs": int(state.get("slurm_jobs") or 0), "core_hours": round(float(state.get("core_hours") or 0), 4),
            "attested_in_job": here, "attested_on_node": os.environ.get("SLURMD_NODENAME")}


def environment(agent_kind: str, claude_bin: str, state: dict[str, Any], job: dict[str, Any], model: str = "",
                host: bool = False, oracle_command: str | None = None, workspace: Path | None = None) -> dict[str, Any]:
    """``state``: the run's fold at the verdict; ``job``: the verified turn's Slurm job (empty: none); ``model``: the
    agent's configured model id ("" : the CLI's default, named as such); ``host``: publish this machine's name
    ([attest] host, off by default: a pushed note is public); ``oracle_command``: whose interpreter to describe."""
    from nightshift.supervisor.attest.provenance import nightshift_source, oracle_environment
    agent: dict[str, Any] = {"kind": agent_kind, "cli": None, "version": None,
                             "model": model or ("none: a scripted stand-in" if agent_kind == "demo" else None)}
    if agent_kind == "claude":
        agent.update(cli=claude_bin, version=_cli_version(claude_bin))
    out = {"nightshift": nightshift_version(), "nightshift_source": nightshift_source(),
           "python": platform.python_version(), "numpy": _version("numpy"),
           "agent": agent, "os": _os_name(), "machine": platform.machine(), "cpu": _cpu_model(),
           "slurm": _slurm(state, job), "container": _container()}
    if oracle_command is not None and workspace is not None:
        out["oracle_command"] = oracle_environment(oracle_command, workspace)
    if host:
        out["host"] = platform.node()
    return out
