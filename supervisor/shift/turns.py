"""One agent turn's files and prompts: the launch spec, the orientation and push-back texts, the claim.

The agent states its claim with `nightshift claim done|blocked --summary ...`, which writes
``shifts/<n>/claim.json``; the supervisor takes it at the next stop.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.agents.base import TurnContext
from nightshift.supervisor.backends.base import LaunchSpec
from nightshift.supervisor.resources import render


def launch_spec(ctx: TurnContext, command: str, env: dict[str, str]) -> LaunchSpec:
    run = ctx.run
    # The agent calls `nightshift claim`: put this installation's bin folder first on its PATH.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    base_env = {"NIGHTSHIFT_RUN_DIR": str(run.root), "NIGHTSHIFT_SHIFT": str(ctx.shift),
                "NIGHTSHIFT_TURN": str(ctx.turn), "NIGHTSHIFT_TOKEN": ctx.token, "PATH": path}
    return LaunchSpec(run_id=run.run_id, shift=ctx.shift, turn=ctx.turn, command=command, cwd=run.workspace,
                      env={**base_env, **env}, wrapper=ctx.file("sh"), log_file=ctx.file("log"),
                      started_file=ctx.file("started"), exit_file=ctx.file("exit"))


def orientation_prompt(run_id: str, shift: int, goal: str, last_verdict: dict[str, Any] | None) -> str:
    note = ""
    if last_verdict:
        note = f"\nThe last check by nightshift said: {last_verdict.get('summary', '')}\n"
    return render("orientation.md", run_id=run_id, shift=shift, goal=goal or "(see CLAUDE.md)", last_verdict=note)


def pushback_text(findings: str, claimed: str | None, nudges: list[str]) -> str:
    claim_note = " after your claim that the goal is met" if claimed == "done" else ""
    nudge_text = ""
    if nudges:
        nudge_text = "\nA message from the human supervising this run:\n" + "\n".join(f"> {n}" for n in nudges) + "\n"
    return render("pushback.md", findings=findings, claim_note=claim_note, nudges=nudge_text)


def write_private(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def claim_file(run_root: Path, shift: int) -> Path:
    return run_root / "shifts" / str(shift) / "claim.json"


def write_claim(run_root: Path, shift: int, token: str, status: str, summary: str) -> Path:
    body = {"status": status, "summary": summary, "token": token, "ts": time.time()}
    path = claim_file(run_root, shift)
    tmp = path.with_name(".claim.json.tmp")
    write_private(tmp, json.dumps(body))
    os.replace(tmp, path)
    return path


def take_claim(run_root: Path, shift: int, turn: int, token: str) -> dict[str, Any] | None:
    """The claim made during this shift (moved aside, so it counts for one stop only)."""
    path = claim_file(run_root, shift)
    try:
        body = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    os.replace(path, path.with_name(f"t{turn}.claim.json"))
    if body.get("token") != token or body.get("status") not in ("done", "blocked"):
        return None
    return {"status": body["status"], "summary": str(body.get("summary", ""))[:2000]}
