"""The Slurm part of the preflight: does the cluster accept the job this run would submit?

``sbatch --test-only`` with the run's own [slurm] resources (partition, account, qos, time, cpus, memory, gres,
extra lines, rendered by the same code as the real batch script) asks the controller whether, and when, it would
start the job, without queueing anything. Where there is no sbatch, or the controller does not answer, the lines
say so and the rest of the preflight goes on. ``--job`` also runs the tiny environment job of `doctor --slurm`
and reports what the job's environment lacks.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from supervisor.config.slurm import SlurmConfig

TEST_ONLY_TIMEOUT = 60.0


def test_script(config: SlurmConfig) -> str:
    from hpc.script import _resource_lines

    lines = ["#!/bin/bash", "#SBATCH --job-name=ns-preflight", f"#SBATCH --time={config.time}",
             f"#SBATCH --cpus-per-task={config.cpus}", *_resource_lines(config), "true"]
    return "\n".join(lines) + "\n"


def slurm_preflight(config: SlurmConfig, workspace: Path, out_dir: Path, job: bool = False) -> list[tuple[str, str]]:
    """(status, text) lines; status is ok, note, fail or skip."""
    sbatch = shutil.which("sbatch")
    if not sbatch:
        return [("fail", "sbatch not found: this run asks for Slurm; run on a login node with the Slurm CLI "
                         "(or `module load slurm`), or use --backend tmux")]
    script = Path(out_dir) / "slurm-test-only.sh"
    script.write_text(test_script(config))
    asked = ", ".join(f"{k}={v}" for k, v in (("partition", config.partition), ("account", config.account),
                                             ("time", config.time), ("cpus", config.cpus)) if v) or "defaults"
    try:
        out = subprocess.run([sbatch, "--test-only", str(script)], capture_output=True, text=True,
                             timeout=TEST_ONLY_TIMEOUT, cwd=workspace, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [("fail", f"sbatch --test-only did not answer within {TEST_ONLY_TIMEOUT:g} s: is slurmctld "
                         "reachable? (`scontrol ping`)")]
    said = " ".join((out.stderr + out.stdout).split())
    if out.returncode != 0:
        lines = [("fail", f"the cluster refuses the job ({asked}): {said[:300]}; fix [slurm] in nightshift.toml")]
    else:
        lines = [("ok", f"the cluster accepts the job ({asked}): {said[:200]}")]
    if job and out.returncode == 0:
        lines += environment_job_lines(config, workspace)
    return lines


def environment_job_lines(config: SlurmConfig, workspace: Path) -> list[tuple[str, str]]:
    """``--job``: the tiny job of `doctor --slurm`, each thing the job's environment lacks as a fail with its fix."""
    from hpc.doctor import rows_from, run_probe
    from hpc.errors import SlurmError

    try:
        report, log = run_probe(Path(workspace), say=lambda _: None)
    except SlurmError as exc:
        return [("fail", f"the environment job could not run: {exc}")]
    return [("ok" if ok else "fail", f"in the job: {what}: {detail}") for ok, what, detail in
            rows_from(report, log, list(config.env))]
