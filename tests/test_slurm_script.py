"""Rendering of the sbatch script and the pieces of the Slurm layer that need no cluster."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from nightshift.hpc.client import make_client
from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.errors import SlurmError, SlurmMissing
from nightshift.hpc.jobs import JobInfo, parse_duration
from nightshift.hpc.script import BatchJob, read_status, refuse_secrets, render_script, write_script


def job(tmp_path: Path, **extra) -> BatchJob:
    return BatchJob(job_name="ns-run1-s1t1", work="bash /w/t1.sh", workdir=tmp_path, log_file=tmp_path / "job.log",
                    status_file=tmp_path / "job.status", signal_file=tmp_path / "job.usr1", **extra)


def test_script_carries_every_option_of_the_config(tmp_path):
    config = SlurmConfig(partition="gpu", account="cosmo", qos="long", time="2-00:00:00", cpus=8, memory="32G",
                         gres="gpu:1", extra=["--exclusive", "#SBATCH --constraint=a100"], modules=["gcc/12", "cuda"],
                         setup="source .venv/bin/activate", grace="5m")
    text = render_script(config, job(tmp_path, description="shift 1 of run1"))
    for line in ("#SBATCH --job-name=ns-run1-s1t1", f"#SBATCH --chdir={tmp_path}",
                 f"#SBATCH --output={tmp_path}/job.log",
                 "#SBATCH --open-mode=append", "#SBATCH --signal=B:USR1@300", "#SBATCH --time=2-00:00:00",
                 "#SBATCH --cpus-per-task=8", "#SBATCH --partition=gpu", "#SBATCH --account=cosmo",
                 "#SBATCH --qos=long", "#SBATCH --mem=32G", "#SBATCH --gres=gpu:1", "#SBATCH --exclusive",
                 "#SBATCH --constraint=a100", "source .venv/bin/activate",
                 "bash /w/t1.sh &"):
        assert line in text.splitlines(), line
    assert "{{" not in text
    assert text.startswith("#!/bin/bash\n# nightshift: shift 1 of run1")
    # every #SBATCH line comes before the first command, or sbatch ignores it
    lines = text.splitlines()
    first_command = next(i for i, l in enumerate(lines) if l and not l.startswith("#"))
    assert all(i < first_command for i, l in enumerate(lines) if l.startswith("#SBATCH"))
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_unset_options_are_left_out(tmp_path):
    text = render_script(SlurmConfig(), job(tmp_path))
    for option in ("--partition", "--account", "--qos", "--mem", "--gres", "module load"):
        assert option not in text


def test_secrets_never_reach_the_script(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    render_script(SlurmConfig(setup="export ANTHROPIC_API_KEY"), job(tmp_path))  # a name is fine, a value is not
    with pytest.raises(SlurmError, match=r"\$ANTHROPIC_API_KEY"):
        render_script(SlurmConfig(setup="export ANTHROPIC_API_KEY=sk-ant-secret-value-123"), job(tmp_path))
    refuse_secrets("nothing here", {"GITHUB_TOKEN": "ghp_abcdefgh"})
    with pytest.raises(SlurmError):
        refuse_secrets("x ghp_abcdefgh", {"GITHUB_TOKEN": "ghp_abcdefgh"})


def test_script_runs_the_work_and_records_its_exit_without_slurm(tmp_path):
    """The same script runs under plain bash: the work's exit status lands in the status file."""
    script = write_script(SlurmConfig(), BatchJob("ns-x", "echo hello; exit 3", tmp_path, tmp_path / "log",
                                                  tmp_path / "status", tmp_path / "usr1"), tmp_path / "job.sh")
    assert script.stat().st_mode & 0o777 == 0o700
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 3 and "hello" in result.stdout
    assert read_status(tmp_path / "status")["exit"] == 3


def test_usr1_fires_during_the_work_and_is_forwarded_when_asked(tmp_path):
    work = "trap 'echo got-usr1; exit 5' USR1; sleep 5 & wait"
    script = write_script(SlurmConfig(), BatchJob("ns-x", f"bash -c {work!r}", tmp_path, tmp_path / "log",
                                                  tmp_path / "status", tmp_path / "usr1", forward_usr1=True),
                          tmp_path / "job.sh")
    out_file = tmp_path / "out"
    with open(out_file, "w") as out:  # a file, not a pipe: the work's orphaned sleep would hold a pipe open
        proc = subprocess.Popen(["bash", str(script)], stdout=out, text=True, cwd=tmp_path)
    for _ in range(100):  # the work has started once its sleep child exists
        if subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGUSR1)
    proc.wait(timeout=20)
    out = out_file.read_text()
    assert "walltime signal (USR1)" in out and "got-usr1" in out
    assert (tmp_path / "usr1").exists()
    assert read_status(tmp_path / "status") | {} == {**read_status(tmp_path / "status"), "exit": 5, "signal": "USR1"}


def test_durations_and_summaries():
    assert parse_duration("1-02:03:04") == 93784
    assert parse_duration("02:03:04") == 7384
    assert parse_duration("03:04") == 184
    assert parse_duration("10") == 600
    assert parse_duration("UNLIMITED") is None
    job = JobInfo(job_id=5, name="ns-a", state="PENDING", reason="Priority")
    assert job.summary() == "PENDING (Priority)"
    running = JobInfo(job_id=5, name="ns-a", state="RUNNING", node="n1", time_left=3725)
    assert running.summary() == "RUNNING on n1 1:02:05 left"
    assert running.changed_from(job) and not running.changed_from(running)


def test_unknown_client_kind_is_a_one_line_error():
    with pytest.raises(SlurmMissing, match="use \"auto\", \"cli\" or \"pyslurm\""):
        make_client("slurmrestd")


def test_modules_setup_and_env_come_first_in_the_job(tmp_path):
    config = SlurmConfig(modules=["gcc/12"], setup="source .venv/bin/activate",
                         env={"OMP_NUM_THREADS": "8", "DATA": "/scratch/my data"})
    lines = render_script(config, job(tmp_path)).splitlines()
    module = next(i for i, l in enumerate(lines) if l.startswith("module load gcc/12 || "))
    setup = lines.index("source .venv/bin/activate")
    env = lines.index("export OMP_NUM_THREADS=8")
    assert module < setup < env < lines.index("export DATA='/scratch/my data'") < lines.index("bash /w/t1.sh &")
    assert "nightshift doctor --slurm" in lines[module] and "exit 3" in lines[module]
    assert subprocess.run(["bash", "-n"], input="\n".join(lines), text=True).returncode == 0


def test_env_refuses_secrets_and_bad_names(tmp_path):
    from nightshift.supervisor.config.schema import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"line 3: slurm.env .*looks like a secret: export it in your shell"):
        parse_config('goal = "g"\n[slurm]\nenv = {ANTHROPIC_API_KEY = "sk-ant-x"}\n')
    with pytest.raises(ConfigError, match=r"slurm.env .*is not a shell variable name"):
        parse_config('goal = "g"\n[slurm]\nenv = {"MY-VAR" = "1"}\n')
    # and the script refuses them too, whatever built the config
    with pytest.raises(SlurmError, match=r"ANTHROPIC_API_KEY looks like a secret"):
        render_script(SlurmConfig.model_construct(env={"ANTHROPIC_API_KEY": "sk-ant-x"}), job(tmp_path))
