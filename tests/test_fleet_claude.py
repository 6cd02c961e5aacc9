"""Two lanes with the real Claude Code CLI (headless) against the fake model API: each lane's agent gets its own
approach in its prompt, works in its own worktree, and the lane that claims done is checked by the fleet in a clean
checkout, merged, and both lanes are written into CHANGELOG.md with their cost."""
from __future__ import annotations

import json
import os
from pathlib import Path

from nightshift.supervisor.fleet.lanes import lanes_dir
from nightshift.supervisor.fleet.launch import create_fleet, supervise_any
from nightshift.supervisor.shift.launcher import resolve_config
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, lane_events, lane_run_dirs, show  # noqa: F401


def test_two_claude_lanes_the_one_that_claims_done_is_checked_and_merged(fleet: Fleet, fake_claude):
    fake, seed = fake_claude
    ws = fleet.ws.path
    seed(ws, mode="headless", backend="local", extra='\n[fleet]\nlanes = 2\napproaches = ["alpha", "beta"]\n')
    run = create_fleet(ws, resolve_config(ws))
    lanes = [lanes_dir(ws, run.run_id) / f"lane-{k}" for k in (1, 2)]
    config_dir = Path(os.environ["CLAUDE_CONFIG_DIR"])
    claude_json = json.loads((config_dir / ".claude.json").read_text())
    for lane in lanes:  # each lane's worktree is a workspace the CLI must trust, as the user's is
        claude_json["projects"][str(lane)] = {"hasTrustDialogAccepted": True}
    (config_dir / ".claude.json").write_text(json.dumps(claude_json))
    fake.push(tools(write(str(lanes[0] / "check.txt"), "ok"), bash(claim("alpha works")),
                    match="Your approach in this lane: alpha"), text("done"))
    assert supervise_any(run, say=lambda _: None) == 0, show(fleet)
    assert fleet.of("fleet.decided")[0]["winner"] == 1
    verified = fleet.of("lane.verified")
    assert [(v["lane"], v["passed"]) for v in verified] == [(1, True)] and verified[0]["cost_usd"] > 0
    assert (ws / "check.txt").read_text() == "ok"  # merged into the run's branch
    prompts = [r.last_user_text() for r in fake.message_requests()]
    assert any("Your approach in this lane: alpha" in p for p in prompts)
    notes = (ws / "CHANGELOG.md").read_text()
    assert "approach: alpha; kept (merged)" in notes and "approach: beta; stopped" in notes, notes
    one = next(d for d in lane_run_dirs(ws) if d.name.endswith("-l1"))
    stops = [e["data"] for e in lane_events(one) if e["type"] == "agent.stopped"]
    assert stops and stops[0]["cost_usd"] > 0
    for run_dir in [run.root, *lane_run_dirs(ws)]:  # the key never reaches a file of ours
        assert "dummy" not in "".join(p.read_text(errors="ignore") for p in run_dir.rglob("*") if p.is_file())
