"""An attestation of a run whose turns ran as batch jobs on the real localhost Slurm cluster carries the verified
turn's job id and node, and verifies."""
from __future__ import annotations

import pytest

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_attest import read_envelope, statement_of
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_slurm import slurm_cluster  # noqa: F401

pytestmark = pytest.mark.slurm
SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nmax_job_retries = 1\n'


def test_a_run_on_the_slurm_cluster_carries_its_job_id(slurm_cluster, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    from nightshift.supervisor.attest.keys import new_key
    key, _ = new_key()
    fix = [["write", "check.txt", "ok"], ["claim", "done", "check.txt says ok"]]
    ws = workspace.configure({"s1t1": fix}, backend="slurm", extra=SLURM)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    events = ws.events(run)
    job = [e["data"]["target"]["job_id"] for e in events if e["type"] == "agent.started"][-1]
    envelope = read_envelope(run.root / "attestations" / "verdict-1.dsse.json")
    slurm = statement_of(envelope)["predicate"]["environment"]["slurm"]
    assert slurm["job_id"] == str(job) and slurm["node"], slurm
    out = nightshift("verify-result", str(run.root / "attestations" / "verdict-1.dsse.json"), "--key", f"{key}.pub")
    assert out.returncode == 0, out.stdout + out.stderr
