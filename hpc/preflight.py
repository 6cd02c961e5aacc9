"""The Slurm part of the preflight: does the cluster accept the job this run would submit?

``sbatch --test-only`` (CliClient.check, as the TUI's submit form uses it) on a script rendered by the same code
and template as the real batch script, with the run's own [slurm] resources (partition, account, qos, time, cpus,
memory, gres, extra lines), asks the controller whether, and when, it would start the job, without queueing
anything. Where there is no sbatch, or the controller does not answer, the lines say so and the rest of the
preflight goes on. ``--job`` also runs the tiny environment job of `doctor --slurm`
and reports what the job's environment lacks.
"""
from __future__ import annotations

from pathlib import Path

from nightshift.hpc.errors import SlurmError, SubmitRejected
from nightshift.supervisor.config.slurm import SlurmConfig

TEST_ONLY_TIMEOUT = 60.0


def preflight_script(config: SlurmConfig, workspace: Path, out_dir: Path) -> Path:
    """The batch script a job of this run would have, doing nothing: the real template and the run's [slurm],
    so what the cluster is asked about is what it will be sent (written to out_dir; refused secrets raise)."""
    from nightshift.hpc.script import BatchJob, write_script

    out_dir = Path(out_dir)
    job = BatchJob(job_name="ns-preflight", work="true", workdir=Path(workspace),
                   log_file=out_dir / "slurm-test-only.log", status_file=out_dir / "slurm-test-only.status",
                   signal_file=out_dir / "slurm-test-only.usr1",
                   description="the preflight's question to the cluster (sbatch --test-only; never queued)")
    return write_script(config, job, out_dir / "slurm-test-only.sh")


def slurm_preflight(config: SlurmConfig, workspace: Path, out_dir: Path, job: bool = False) -> list[tuple[str, str]]:
    """(status, text) lines; status is ok, note, fail or skip."""
    from nightshift.hpc.cli_client import CliClient
    from nightshift.hpc.errors import SlurmMissing

    try:
        script = preflight_script(config, workspace, out_dir)
    except SlurmError as exc:  # a secret in the script, a bad env name: nothing would be submitted either
        return [("fail", f"the batch script cannot be written: {exc}")]
    try:
        client = CliClient(timeout=TEST_ONLY_TIMEOUT)
    except SlurmMissing as exc:
        return [("fail", f"{exc} (this run asks for Slurm; on a cluster, try `module load slurm`)")]
    asked = ", ".join(f"{k}={v}" for k, v in (("partition", config.partition), ("account", config.account),
                                             ("time", config.time), ("cpus", config.cpus)) if v) or "defaults"
    try:
        said = " ".join(client.check(script).split())
    except SubmitRejected as exc:
        return [("fail", f"the cluster refuses the job ({asked}): {' '.join(str(exc).split())[:300]}; "
                         "fix [slurm] in nightshift.toml")]
    except SlurmError as exc:  # it did not answer in time
        return [("fail", f"{exc}: is slurmctld reachable? (`scontrol ping`)")]
    lines = [("ok", f"the cluster accepts the job ({asked}): {said[:200]}")]
    if job:
        lines += environment_job_lines(config, workspace)
    return lines


def environment_job_lines(config: SlurmConfig, workspace: Path) -> list[tuple[str, str]]:
    """``--job``: the tiny job of `doctor --slurm`, each thing the job's environment lacks as a fail with its fix."""
    from nightshift.hpc.doctor import rows_from, run_probe

    try:
        report, log = run_probe(Path(workspace), say=lambda _: None)
    except SlurmError as exc:
        return [("fail", f"the environment job could not run: {exc}")]
    return [("ok" if ok else "fail", f"in the job: {what}: {detail}") for ok, what, detail in
            rows_from(report, log, list(config.env))]
