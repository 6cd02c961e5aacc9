"""Preflight lines about the agent: its CLI and version, credentials (present or not, never shown), workspace
trust, the Stop hook settings, and with ``--agent-turn`` one short real turn that proves the agent starts,
stops and is heard by a supervisor through the same Stop hook and channel a run uses.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterable

from nightshift.supervisor.agents.credentials import find_credentials
from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, SKIP, Line, PreflightContext

TURN_PROMPT = "This is a start-up check by nightshift. Reply with the single word: ready. Do not use any tool."
TURN_TIMEOUT = 180.0


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def credentials_line() -> Line:
    found = find_credentials()
    return Line(OK if found else FAIL, "credentials", found.describe())


def _trust_line(workspace: Path) -> Line:
    from nightshift.supervisor.agents.claude import claude_config_file

    path = claude_config_file()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        return Line(FAIL, "agent", f"{path} is not valid JSON: Claude Code cannot read its own config; fix it")
    project = (data.get("projects") or {}).get(str(workspace)) or {}
    if project.get("hasTrustDialogAccepted"):
        line = Line(OK, "agent", "workspace trusted by Claude Code (no trust dialog will hold the pane)")
    else:
        return Line(FAIL, "agent", "workspace not trusted by Claude Code: its trust dialog would hold the run "
                                   "in the pane; run `nightshift init --trust` (asks first)")
    if not data.get("hasCompletedOnboarding"):
        return Line(NOTE, "agent", "workspace trusted, but Claude Code's first-run onboarding is not done: start "
                                   "`claude` once by hand")
    return line


def _hook_line(hook_timeout: float, workspace: Path) -> Line:
    """The hook settings a run gives the agent: valid JSON, and the hook command runs and does nothing outside a
    supervised session (as it must in every other Claude session in this folder)."""
    from nightshift.supervisor.agents.claude import stop_hook_settings

    settings = json.loads(json.dumps(stop_hook_settings(hook_timeout)))
    hook = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIGHTSHIFT_")}
    try:
        out = subprocess.run(["bash", "-c", hook], input='{"hook_event_name": "Stop"}', capture_output=True,
                             text=True, timeout=30, cwd=workspace, env=env)
    except subprocess.TimeoutExpired:
        return Line(FAIL, "agent", f"the Stop hook `{hook}` did not answer within 30 s")
    if out.returncode != 0 or out.stdout.strip():
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return Line(FAIL, "agent", f"the Stop hook `{hook}` fails ({out.returncode}: {tail}); reinstall nightshift")
    return Line(OK, "agent", "Stop hook settings valid; the hook runs and leaves unsupervised sessions alone")


def agent_lines(ctx: PreflightContext) -> Iterable[Line]:
    agent = ctx.config.agent
    if agent.kind == "demo":
        yield Line(OK, "agent", "the demo agent (scripted, offline; not a model)")
        return
    if agent.kind == "command":
        argv = shlex.split(agent.command or "")
        found = shutil.which(argv[0]) if argv else None
        if not argv:
            yield Line(FAIL, "agent", "[agent] command is empty: give the template, e.g. \"codex exec {prompt}\"")
        elif not found and not (ctx.workspace / argv[0]).exists():
            yield Line(FAIL, "agent", f"{argv[0]} (from [agent] command) is not found on PATH: install it or fix the "
                                      "command")
        else:
            yield Line(OK, "agent", f"command agent: {argv[0]} found")
        return
    path = shutil.which(agent.claude_bin)
    version = _version([path, "--version"]) if path else None
    if not path:
        yield Line(FAIL, "agent", f"{agent.claude_bin} not found on PATH: npm install -g @anthropic-ai/claude-code "
                                  "(or set [agent] claude_bin)")
        return
    yield Line(OK if version else FAIL, "agent", f"{version} at {path}" if version else
               f"{path} --version fails: reinstall Claude Code")
    yield credentials_line()
    if agent.mode == "interactive":
        yield _trust_line(ctx.workspace)
    yield _hook_line(agent.hook_timeout, ctx.workspace)


def agent_turn_lines(ctx: PreflightContext) -> Iterable[Line]:
    if not ctx.agent_turn:
        return
    if ctx.config.agent.kind != "claude":
        yield Line(SKIP, "agent turn", f"--agent-turn is for the claude agent (this one is {ctx.config.agent.kind})")
        return
    yield one_turn(ctx)


def one_turn(ctx: PreflightContext) -> Line:
    """`claude -p` with the run's Stop hook, in a scratch run folder whose stops/ this process answers."""
    from nightshift.supervisor.agents.claude import PINNED_ENV, stop_hook_settings
    from nightshift.supervisor.agents.claude_records import read_stream
    from nightshift.supervisor.run.liveness import write_supervisor_info
    from nightshift.supervisor.shift import stop_channel

    agent = ctx.config.agent
    run_dir = ctx.out_dir / "agent-turn"
    (run_dir / "stops").mkdir(parents=True, exist_ok=True, mode=0o700)
    write_supervisor_info(run_dir / "supervisor.json")
    settings = run_dir / "claude-settings.json"
    settings.write_text(json.dumps(stop_hook_settings(agent.hook_timeout)))
    stream = run_dir / "stream.jsonl"
    token = secrets.token_hex(8)
    env = {**os.environ, **PINNED_ENV, "NIGHTSHIFT_RUN_DIR": str(run_dir), "NIGHTSHIFT_TOKEN": token,
           "NIGHTSHIFT_SHIFT": "0", "NIGHTSHIFT_HOOK_TIMEOUT": "60"}
    argv = [agent.claude_bin, "-p", "--output-format", "stream-json", "--verbose", "--settings", str(settings)]
    if agent.model:
        argv += ["--model", agent.model]
    heard: list[dict] = []
    done = threading.Event()

    def answer_stops() -> None:  # what the supervisor does at a stop: read the request, answer it
        while not done.is_set():
            for request in stop_channel.pending(run_dir / "stops"):
                heard.append(request)
                stop_channel.answer(run_dir / "stops", request["id"], "allow")
            done.wait(0.05)
    listener = threading.Thread(target=answer_stops, daemon=True)
    listener.start()
    started = time.monotonic()
    try:
        with open(stream, "wb") as out:
            proc = subprocess.run(argv, input=TURN_PROMPT.encode(), stdout=out, stderr=subprocess.PIPE,
                                  cwd=ctx.workspace, env=env, timeout=TURN_TIMEOUT)
        code, err = proc.returncode, proc.stderr.decode(errors="replace").strip()
    except subprocess.TimeoutExpired:
        code, err = None, f"no end within {TURN_TIMEOUT:g} s"
    finally:
        done.set()
        listener.join(5)
    stop = read_stream(stream, code)
    seconds = time.monotonic() - started
    if code != 0 or stop.error:
        why = stop.error or (err.splitlines() or [f"exit status {code}"])[-1]
        return Line(FAIL, "agent turn", f"one real turn failed ({why[:200]}); the run would fail the same way")
    if not any(r.get("token") == token for r in heard):
        return Line(FAIL, "agent turn", "the agent ran and stopped, but its Stop hook never reached the supervisor: "
                                        "check hooks in your Claude settings (disableAllHooks?)")
    return Line(OK, "agent turn", f"one real turn: started, answered {stop.last_message[:30]!r}, stopped and was "
                                  f"heard through the Stop hook ({seconds:.1f} s, ${stop.cost_usd or 0:.4f})")
