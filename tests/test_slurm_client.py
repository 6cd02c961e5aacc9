"""The Slurm clients (CLI and pyslurm) against a real single-node cluster on localhost."""
from __future__ import annotations

import pytest

from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.errors import SubmitRejected
from nightshift.hpc.script import read_status
from tests.fixtures_slurm import slurm_client, slurm_cluster, start_if_pending, submit_job, wait_for  # noqa: F401

pytestmark = pytest.mark.slurm


def test_submit_query_cancel(slurm_client, tmp_path):
    job_id, job = submit_job(slurm_client, tmp_path, "ns-test-cancel", "sleep 300")
    running = wait_for(lambda: (slurm_client.query().get(job_id) or None) if
                       slurm_client.query().get(job_id) and slurm_client.query()[job_id].running else None,
                       what="the job to run")
    assert running.name == "ns-test-cancel"
    assert running.node == "localhost"
    assert running.time_left is not None and 0 < running.time_left <= 300
    # what the TUI and the core-hour budget read from the supervisor's events: start, limit, run time, CPUs
    assert running.start is not None and running.time_limit == 300 and running.cpus == 1 and running.gpus == 0
    assert running.run_time is not None and running.run_time >= 0
    slurm_client.cancel(job_id)
    ended = wait_for(lambda: (j := slurm_client.query().get(job_id)) and j.terminal and j, what="the job to end")
    assert ended.state == "CANCELLED" and ended.start == running.start and ended.run_time is not None
    status = wait_for(lambda: read_status(job.status_file), what="the status file")
    assert status["signal"] == "TERM" and status["job"] == str(job_id)
    slurm_client.cancel(job_id)  # cancelling a finished job is not an error


def test_exit_status_is_recorded_by_the_job(slurm_client, tmp_path):
    job_id, job = submit_job(slurm_client, tmp_path, "ns-test-exit", "echo working; exit 7")
    status = wait_for(lambda: read_status(job.status_file), what="the status file")
    assert status == {**status, "exit": 7, "signal": "", "job": str(job_id), "restarts": 0}
    ended = wait_for(lambda: (j := slurm_client.query([job_id]).get(job_id)) and j.terminal and j, what="the end")
    assert (ended.state, ended.exit_code) == ("FAILED", 7)
    assert "working" in job.log_file.read_text()


def test_query_filters_by_prefix_and_ids(slurm_client, tmp_path):
    mine, _ = submit_job(slurm_client, tmp_path, "ns-test-mine", "sleep 120")
    other, _ = submit_job(slurm_client, tmp_path, "someone-else", "sleep 120")
    try:
        jobs = slurm_client.query()
        assert mine in jobs and other not in jobs
        assert other in slurm_client.query([other])
    finally:
        slurm_client.cancel(mine)
        slurm_client.cancel(other)


def test_sbatch_rejection_is_shown_verbatim(slurm_client, tmp_path):
    with pytest.raises(SubmitRejected) as caught:
        submit_job(slurm_client, tmp_path, "ns-test-badpart", "true", config=SlurmConfig(partition="nosuch"))
    assert "Invalid partition name specified" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_requeue_keeps_the_log_and_counts_restarts(slurm_client, tmp_path):
    job_id, job = submit_job(slurm_client, tmp_path, "ns-test-requeue", "sleep 300")
    wait_for(lambda: (j := slurm_client.query().get(job_id)) and j.running, what="the job to run")
    # RUNNING comes before the script's first line: requeued before it, there is no first run's output to keep
    wait_for(lambda: job.log_file.exists() and "restart 0" in job.log_file.read_text(), what="the first run's log")
    slurm_client.requeue(job_id)
    wait_for(lambda: (j := slurm_client.query().get(job_id)) and j.pending, what="the job to be pending again")

    seen = []  # what the client saw of the job: the failure message says it

    def rerun():
        j = slurm_client.query().get(job_id)
        seen.append(j and (j.state, j.reason))
        start_if_pending(slurm_client, job_id, j)
        return j and j.running and j

    again = wait_for(rerun, every=2, what=lambda: f"the rerun (seen first {seen[:3]}, last {seen[-3:]})")
    assert again.restarts == 1
    log = wait_for(lambda: "restart 1" in job.log_file.read_text() and job.log_file.read_text(), what="rerun log")
    assert "restart 0" in log  # --open-mode=append: the first run's output is still there
    slurm_client.cancel(job_id)
