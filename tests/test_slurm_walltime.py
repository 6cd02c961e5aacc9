"""A job at a 1-minute walltime: the USR1 warning fires before the limit, TIMEOUT at it (about 80 s; slow)."""
from __future__ import annotations

import pytest

from nightshift.hpc.client import make_client
from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.script import read_status
from tests.fixtures_slurm import QUICK, slurm_cluster, submit_job, wait_for  # noqa: F401

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_walltime_signal_then_timeout(slurm_cluster, tmp_path):
    client = make_client("cli", backoff=QUICK)
    config = SlurmConfig(time="1", grace=30)
    # One job ignores the warning and is killed at the limit; the other wraps up on USR1 and ends cleanly.
    killed, killed_job = submit_job(client, tmp_path, "ns-test-timeout", "sleep 600", config=config)
    work = "bash -c 'trap \"echo wrapping up; exit 0\" USR1; while :; do sleep 1; done'"
    wrapped, wrapped_job = submit_job(client, tmp_path, "ns-test-wrapup", work, config=config, forward_usr1=True)

    status = wait_for(lambda: read_status(wrapped_job.status_file), timeout=100, every=2, what="the wrap-up")
    assert status["signal"] == "USR1" and status["exit"] == 0
    assert "wrapping up" in wrapped_job.log_file.read_text()
    assert wrapped_job.signal_file.exists()

    ended = wait_for(lambda: (j := client.query([killed]).get(killed)) and j.terminal and j, timeout=150, every=2,
                     what="the TIMEOUT")
    assert (ended.state, ended.reason) == ("TIMEOUT", "TimeLimit")
    assert killed_job.signal_file.exists()  # the warning came first
    status = wait_for(lambda: read_status(killed_job.status_file), what="the status file")
    assert status["signal"] == "TERM" and status["exit"] == 143
    assert "DUE TO TIME LIMIT" in killed_job.log_file.read_text()
    assert client.query([wrapped])[wrapped].state == "COMPLETED"
