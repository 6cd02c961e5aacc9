"""Slurm fixtures: a private single-node cluster on localhost for the whole session, and clients to reach it.

The cluster needs root and Debian's slurm-wlm and munge (`.ci/install-tools slurm`). Where it cannot come up,
the Slurm tests fail in CI (CI=true) and are skipped loudly elsewhere, with the reason.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from nightshift.hpc.client import make_client
from nightshift.hpc.errors import SlurmCommandFailed
from nightshift.hpc.wiring import register as register_slurm
from nightshift.hpc.interface import Backoff
from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.localcluster import ClusterUnavailable, LocalCluster
from nightshift.hpc.pyslurm_client import pyslurm_problem
from nightshift.hpc.script import BatchJob, write_script

QUICK = Backoff(delays=(0.5, 1.0))  # tests do not wait out a long controller outage


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the localhost Slurm cluster is required in CI: {reason}", pytrace=False)
    pytest.skip(f"SLURM TESTS SKIPPED: {reason}")


# Each test module imports the fixture, which makes one fixture per module: they share this one cluster.
_shared: dict[str, object] = {}


@pytest.fixture(scope="session")
def slurm_cluster():
    if "cluster" not in _shared and "reason" not in _shared:
        reason = LocalCluster.why_not()
        if reason is None:
            cluster = LocalCluster()  # in a private temp folder of its own, removed at the end
            try:
                _shared["cluster"] = cluster.start()
            except ClusterUnavailable as exc:
                cluster.stop()
                reason = str(exc)
        if reason:
            _shared["reason"] = reason
    if "reason" in _shared:
        unavailable(str(_shared["reason"]))
    register_slurm()  # in-process runs reach Slurm the way `nightshift` wires it in
    yield _shared["cluster"]
    cluster = _shared.pop("cluster", None)  # the first copy of the fixture torn down stops it
    if cluster is not None:
        cluster.stop()


@pytest.fixture(params=["cli", "pyslurm"])
def slurm_client(request, slurm_cluster):
    """Each behaviour test runs against both clients; pyslurm where a matching build is importable. CI builds one
    (`make test` under CI=true, from ../shared/vendor), so there a missing build fails instead of skipping."""
    if request.param == "pyslurm":
        problem = pyslurm_problem()
        if problem and os.environ.get("CI") == "true":
            pytest.fail(f"the pyslurm client is required in CI: {problem} (`make test` builds it from "
                        "../shared/vendor/pyslurm-22.5.3.tar.gz; see .ci/pyslurm)", pytrace=False)
        if problem:
            pytest.skip(f"pyslurm client not tested: {problem} (`make pyslurm` builds it where "
                        "../shared/vendor/pyslurm-22.5.3.tar.gz is beside the clone)")
    return make_client(request.param, backoff=QUICK)


def wait_for(predicate, timeout: float = 150, every: float = 0.5, what="condition"):
    """Poll until predicate() is truthy; its value. Waiting has a bound, never a timing assertion: a generous one,
    since the scheduler on a shared CI machine under the whole suite has taken over 60 s to start a job. ``what``
    may be a callable, asked only on failure (to say what was last seen)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"gave up waiting for {what() if callable(what) else what} after {timeout:.0f}s")


def start_if_pending(client, job_id: int, job) -> None:
    """Ask Slurm to start a requeued job now, again while it waits: a requeued job gets a begin time while its
    first run is still being cleaned up, and Slurm can set it again after an early StartTime=now (seen under the
    whole suite). The job may start, or end, between the look and the ask; that is what was wanted.

    Not in the second the job was first seen waiting: the requeue revoked the job's credential on the node, and
    slurmd refuses a credential made in the same second (``cred->ctime <= revoked``, whole seconds): the rerun then
    fails at once (FAILED, exit 1, no output), about one fresh cluster in five with the quick pyslurm client."""
    if job is None or not job.pending:
        return
    first_seen = _pending_since.setdefault((job_id, job.restarts), time.time())
    if int(time.time()) <= int(first_seen):  # the revocation happened in this second or before
        return
    try:
        client.start_now(job_id)
    except SlurmCommandFailed as exc:
        if "no longer pending" not in str(exc) and "already finished" not in str(exc):
            raise


_pending_since: dict[tuple[int, int], float] = {}  # (job, restarts) -> when it was first seen waiting


def batch_job(tmp_path: Path, name: str, work: str, forward_usr1: bool = False) -> BatchJob:
    return BatchJob(job_name=name, work=work, workdir=tmp_path, log_file=tmp_path / f"{name}.log",
                    status_file=tmp_path / f"{name}.status", signal_file=tmp_path / f"{name}.usr1",
                    forward_usr1=forward_usr1)


def submit_job(client, tmp_path: Path, name: str, work: str, config: SlurmConfig | None = None,
               **job_args) -> tuple[int, BatchJob]:
    job = batch_job(tmp_path, name, work, **job_args)
    script = write_script(config or SlurmConfig(time="5:00", grace=30), job, tmp_path / f"{name}.sbatch")
    return client.submit(script), job
