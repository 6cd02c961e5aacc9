"""Headless Claude Code with each turn a batch job on the localhost cluster; only the model is fake.

The job inherits the supervisor's environment (ANTHROPIC_BASE_URL and the key), never a file of ours.
"""
from __future__ import annotations

import json

import pytest

from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_slurm import slurm_cluster  # noqa: F401

pytestmark = pytest.mark.slurm
SLURM = '\n[slurm]\nclient = "cli"\ntime = "10:00"\npoll_interval = "1s"\n'


def test_headless_claude_turns_as_batch_jobs_with_a_pushback(slurm_cluster, workspace, fake_claude):
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="headless", backend="slurm", extra=SLURM)
    fake.push(tools(write(str(ws / "check.txt"), "no"), bash(claim("premature"))), text("done"),
              tools(write(str(ws / "check.txt"), "ok"), bash(claim("fixed")), match="does not pass yet"),
              text("fixed now"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    targets = [e["data"]["target"] for e in evs if e["type"] == "agent.started"]
    assert [t["backend"] for t in targets] == ["slurm", "slurm"] and targets[0]["job_id"] != targets[1]["job_id"]
    jobs = [e["data"] for e in evs if e["type"] == "slurm.job_changed"]
    last = {j["job_id"]: j["state"] for j in jobs}  # a short job may run between two polls: its end is what counts
    assert last == {targets[0]["job_id"]: "COMPLETED", targets[1]["job_id"]: "COMPLETED"}
    stops = [e["data"] for e in evs if e["type"] == "agent.stopped"]
    assert [s["claim"]["summary"] for s in stops] == ["premature", "fixed"]
    assert stops[0]["session_id"] == stops[1]["session_id"] and stops[0]["cost_usd"] > 0  # resumed in job 2
    assert "--resume" in run.turn_file(1, 2, "inner.sh").read_text() and run.turn_file(1, 2, "sbatch").exists()
    assert evs[-1]["type"] == "run.finished" and evs[-1]["data"]["outcome"] == "done"
    assert (ws / "check.txt").read_text().strip() == "ok"
    assert "dummy" not in "".join(p.read_text(errors="ignore") for p in run.root.rglob("*") if p.is_file())
