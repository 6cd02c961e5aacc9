"""The batched poller and the controller going away, against the real localhost cluster."""
from __future__ import annotations

import time

import pytest

from nightshift.hpc.client import make_client
from nightshift.hpc.interface import Backoff
from nightshift.hpc.errors import ControllerUnavailable
from nightshift.hpc.poller import JobPoller
from nightshift.hpc.script import read_status
from tests.fixtures_slurm import slurm_client, slurm_cluster, submit_job, wait_for  # noqa: F401

pytestmark = pytest.mark.slurm


def test_one_query_for_all_watched_jobs(slurm_client, tmp_path):
    poller = JobPoller(slurm_client, interval=1.0, cache_file=tmp_path / "queue.json")
    ids = [submit_job(slurm_client, tmp_path, f"ns-test-many{i}", "sleep 120")[0] for i in range(4)]
    try:
        for job_id in ids:
            poller.watch(job_id)
        before = slurm_client.calls
        changes = poller.poll(force=True)
        assert slurm_client.calls - before == 1  # one controller call, whatever the number of jobs
        assert {c.job_id for c in changes} == set(ids)
        assert all(c.old is None and c.new is not None for c in changes)
        wait_for(lambda: all(poller.poll(force=True) is not None and (j := poller.get(i)) and j.running for i in ids),
                 what="all jobs to run")
        assert poller.poll(force=True) == []  # nothing changed: nothing reported
    finally:
        for job_id in ids:
            slurm_client.cancel(job_id)
    ended = wait_for(lambda: [c for c in poller.poll(force=True) if c.new and c.new.terminal] or None,
                     what="the cancellations to be seen")
    assert {c.new.state for c in ended} == {"CANCELLED"}


def test_supervisors_of_one_user_share_one_snapshot(slurm_client, tmp_path):
    job_id, _ = submit_job(slurm_client, tmp_path, "ns-test-shared", "sleep 60")
    try:
        first = JobPoller(slurm_client, interval=30.0, cache_file=tmp_path / "queue.json")
        second = JobPoller(slurm_client, interval=30.0, cache_file=tmp_path / "queue.json")
        first.watch(job_id)
        first.poll()
        second.watched[job_id] = 0.0  # watching since long before the snapshot was taken
        before = slurm_client.calls
        assert [c.job_id for c in second.poll()] == [job_id]
        assert slurm_client.calls == before and second.queries == 0  # read the first one's snapshot
    finally:
        slurm_client.cancel(job_id)


def test_backoff_when_nothing_changes(slurm_client, tmp_path):
    poller = JobPoller(slurm_client, interval=2.0, max_interval=5.0, cache_file=tmp_path / "queue.json")
    intervals = []
    for _ in range(5):
        poller.poll(force=True)
        intervals.append(poller.current)
    assert intervals == sorted(intervals) and intervals[-1] == 5.0 and intervals[0] == 3.0
    job_id, _ = submit_job(slurm_client, tmp_path, "ns-test-backoff", "sleep 60")
    poller.watch(job_id)
    assert poller.current == 2.0 and poller.next_due - time.monotonic() <= 2.0
    slurm_client.cancel(job_id)


def test_controller_restart_while_a_job_runs(slurm_cluster, slurm_client, tmp_path):
    job_id, job = submit_job(slurm_client, tmp_path, "ns-test-restart", "sleep 15; echo finished")
    poller = JobPoller(slurm_client, interval=1.0, cache_file=tmp_path / "queue.json")
    poller.watch(job_id)
    wait_for(lambda: poller.poll(force=True) is not None and (j := poller.get(job_id)) and j.running,
             what="the job to run")
    impatient = make_client(slurm_client.kind, backoff=Backoff(delays=()))  # each try waits ~9 s in libslurm
    poller.client = impatient
    slurm_cluster.stop_controller()
    try:
        with pytest.raises(ControllerUnavailable, match="slurmctld did not answer"):
            impatient.query()
        assert poller.poll(force=True) == []  # no answer is no news: the job is not declared gone
        assert "slurmctld did not answer" in poller.unavailable and poller.get(job_id).running
    finally:
        slurm_cluster.start_controller(wait=True)
    status = wait_for(lambda: read_status(job.status_file), what="the job to finish", timeout=150)
    assert status["exit"] == 0 and "finished" in job.log_file.read_text()
    done = wait_for(lambda: (j := slurm_client.query().get(job_id)) and j.terminal and j, what="COMPLETED")
    assert done.state == "COMPLETED"
