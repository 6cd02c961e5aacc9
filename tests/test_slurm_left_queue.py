"""A job that leaves the queue between two polls is recorded with the end Slurm's accounting has for it, not the
live state last seen: on the localhost cluster a turn's job runs and completes; the poller's view of it is a job
last seen PENDING that is no longer in the queue (what a poll sees once MinJobAge has passed), and the
``slurm.job_changed`` data the backend queues says COMPLETED, as sacct does or, on a cluster without accounting
(this one), as the job's own exit record does (the dashboard of a stopped lane showed "slurm 18 PENDING" long
after job 18 had completed)."""
from __future__ import annotations

import pytest

from nightshift.hpc.jobs import JobInfo
from tests.fixtures_slurm import slurm_cluster, wait_for  # noqa: F401
from tests.test_slurm_backend import backend_for, spec_for, wait_over

pytestmark = pytest.mark.slurm


def test_a_job_that_left_the_queue_is_recorded_with_its_accounted_end(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path)
    target = backend.launch(spec_for(run, "echo done; exit 0"))
    wait_over(backend, target)
    job_id = int(target["job_id"])
    backend.take_changes()
    backend._accounted.discard(job_id)  # as for a job whose end this backend has not recorded yet
    seen = JobInfo(job_id=job_id, name=target["job_name"], state="PENDING", reason="Priority", cpus=1)
    backend._record_change(job_id, None, target, old=seen)  # the poll's news: it is no longer in the queue
    change = backend.take_changes()[-1]
    # Where the cluster keeps accounting, sacct's end; where it does not (this one: no slurmdbd), the end the
    # batch script recorded. Never the PENDING last seen, never only "GONE".
    assert change["job_id"] == job_id and change["state"] == "COMPLETED" and change["exit_code"] == 0, change
    assert "GONE" not in str(change)
