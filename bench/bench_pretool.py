"""Benchmark: the PreToolUse hook (`nightshift hook pretool`) against the real Claude Code CLI.

A headless `claude -p` session against the fake Messages API on 127.0.0.1 makes N Bash tool calls (`true`).
1. Hook fired -> decision returned: the hook command, exactly as nightshift writes it, wrapped in a shell that
   stamps the time before and after it (the stamps cost ~1 ms and are counted). Goal (issue 10): p95 < 50 ms.
2. Wall time of the whole session: without a policy (Bash allowed, no hooks), with the policy's hooks (no
   sandbox), and with hooks + Claude Code's sandbox (bubblewrap), as init defaults run it. Goal: < 10% slower.

Run: .venv/bin/python bench/bench_pretool.py [--calls 200]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL_S = 3.0  # seconds a real model takes to answer a tool result: a low figure for Sonnet-class models
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import against_goal, info, percentile  # noqa: E402
from supervisor.agents.claude_settings import claude_settings, hook_command  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, bash, text, tools  # noqa: E402


def policy_doc(ws: Path, run_dir: Path, sandbox: bool) -> dict:
    return {"v": 1, "workspace": str(ws), "plan": str(ws / "CLAUDE.md"), "writable": [tempfile.gettempdir()],
            "protect": [[str(ws / "reference" / "cl.dat"), "references", "read-only"],
                        [str(ws / "nightshift.toml"), "config", "the user's"]],
            "hide": [[str(ws.parent / "heldout"), "held out"]], "network": True, "sandbox": sandbox,
            "run_dir": str(run_dir), "run_files": []}


def session(ws: Path, settings: dict, calls: int, env: dict) -> float:
    path = ws.parent / "settings.json"
    path.write_text(json.dumps(settings))
    with FakeAnthropic([tools(bash("true")) for _ in range(calls)] + [text("done")]) as fake:
        started = time.monotonic()
        out = subprocess.run(["claude", "-p", "go", "--output-format", "json", "--permission-mode", "dontAsk",
                              "--settings", str(path)], cwd=ws, capture_output=True, text=True, timeout=1800,
                             env={**env, **fake.env()})
        wall = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"claude failed: {out.stderr[-500:]}")
    return wall


def hook_alone(ws: Path, run_dir: Path, env: dict, calls: int) -> None:
    """The same hook outside the CLI, and the floor any Python hook pays: the interpreter starting (-S -E)."""
    payload = json.dumps({"tool_name": "Bash", "tool_input": {"command": "true"}, "cwd": str(ws)})
    command = hook_command("supervisor.shift.pretool")
    for name, argv in (("hook alone (no CLI), p50", ["sh", "-c", command]),
                       ("python -S -E starting (the floor), p50", [sys.executable, "-S", "-E", "-c", "pass"])):
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            subprocess.run(argv, input=payload, text=True, env=env, capture_output=True, check=True)
            times.append(1000 * (time.perf_counter() - started))
        print(info(name, percentile(times, 50), "ms"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    tmp = Path(tempfile.mkdtemp(prefix="nightshift-bench-pretool-"))
    ws, run_dir, config = tmp / "ws", tmp / "run", tmp / "claude-config"
    for d in (ws / "reference", run_dir, config):
        d.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "NIGHTSHIFT_RUN_DIR": str(run_dir),
           "NIGHTSHIFT_TOKEN": "bench", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1"}
    stamps = tmp / "stamps.txt"
    print(f"PreToolUse hook against the real Claude Code CLI ({calls} Bash tool calls per session)")
    variants = {}
    for name, sandbox, hooked in (("no policy", False, False), ("policy hooks, no sandbox", False, True),
                                  ("policy hooks + sandbox (init defaults)", True, True)):
        doc = policy_doc(ws, run_dir, sandbox)
        (run_dir / "policy.json").write_text(json.dumps(doc))
        settings = claude_settings(doc if hooked else None, None, [], [])
        if not hooked:
            settings["permissions"] = {"allow": ["Bash"]}
        else:
            hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]
            hook["command"] = (f"s=$(date +%s%N); {hook['command']}; rc=$?; "
                               f"echo $s $(date +%s%N) >> {shlex.quote(str(stamps))}; exit $rc")
        stamps.unlink(missing_ok=True)
        variants[name] = session(ws, settings, calls, env)
        if hooked and not sandbox:
            lat = [(int(b) - int(a)) / 1e6 for a, b in (l.split() for l in stamps.read_text().splitlines())]
            print(info("hook calls measured", len(lat), ""))
            print(info("hook fired -> decision returned, p50", percentile(lat, 50), "ms"))
            print(against_goal("hook fired -> decision returned, p95", percentile(lat, 95), 50.0, "ms"))
    hook_alone(ws, run_dir, env, calls)
    base = variants["no policy"]
    for name, wall in variants.items():
        print(info(f"session wall time: {name}", wall, "s"))
    for name in list(variants)[1:]:
        print(against_goal(f"slowdown, {name}", 100 * (variants[name] / base - 1), 10.0, "%"))
    # The scripted model answers at once and every call is `true`, so the session is nearly all tool-call overhead:
    # the worst case. What a call costs, set against a model that takes MODEL_S per answer (derived, not measured).
    for name in list(variants)[1:]:
        added = (variants[name] - base) / calls
        print(info(f"added per tool call, {name}", 1000 * added, "ms"))
        print(info(f"  as a share of a {MODEL_S:.0f} s model answer per call (derived)", 100 * added / MODEL_S, "%"))
    subprocess.run(["rm", "-rf", str(tmp)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
