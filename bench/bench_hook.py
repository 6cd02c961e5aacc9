"""Benchmark: Stop hook fired -> block answer returned, verification excluded, against the real Claude Code CLI.

A headless `claude -p` session with nightshift's Stop hook, against the fake Messages API on 127.0.0.1. A
responder thread plays the supervisor and answers every stop at once with a block (so verification is
excluded) for N stops, then allows. For each stop we take the hook process's start (from /proc, when the CLI
fired it), the moment the answer was written, and the moment the CLI's next request (carrying the push-back)
reached the model API. Goal (issue 3): p95 of fired -> answer returned under 300 ms.

Run: .venv/bin/python bench/bench_hook.py [--stops 30]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import against_goal, info, percentile  # noqa: E402
from nightshift.supervisor.shift import stop_channel  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, text  # noqa: E402


def claude_settings() -> dict:
    """The settings nightshift writes for an interactive session (the same Stop hook command)."""
    from nightshift.supervisor.agents.claude_settings import claude_settings as settings_for
    return settings_for(None, 660, [], [])

TICK = os.sysconf("SC_CLK_TCK")
# Claude Code 2.1.330 was seen to end a -p session after 9 blocked stops in a row; stay under that per session.
PER_SESSION = 8


def process_start(pid: int) -> float | None:
    """Wall-clock start of ``pid`` (10 ms resolution), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (FileNotFoundError, IndexError):
        return None
    return time.time() - uptime + int(fields[19]) / TICK


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stops", type=int, default=30)
    stops_wanted = parser.parse_args().stops
    if not shutil.which("claude"):
        print("bench_hook: the claude CLI is not installed (make tools)")
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="nightshift-bench-hook-"))
    run_dir, work, config = tmp / "run", tmp / "work", tmp / "claude-config"
    for d in (run_dir / "stops", work, config):
        d.mkdir(parents=True)
    (run_dir / "supervisor.json").write_text(json.dumps({"host": os.uname().nodename, "pid": os.getpid()}))
    settings = tmp / "settings.json"
    settings.write_text(json.dumps(claude_settings()))
    samples: list[tuple[float, float, float, int]] = []  # (hook started, answer written, hook ended, requests)
    arrivals: list[tuple[int, float]] = []
    done = threading.Event()

    with FakeAnthropic([text(f"turn {i}") for i in range(4 * stops_wanted)]) as fake:
        def responder() -> None:
            in_session: dict[str, int] = {}
            while not done.is_set():
                for request in stop_channel.pending(run_dir / "stops"):
                    start = process_start(int(request["pid"]))
                    answered = in_session.get(request["session_id"], 0)
                    in_session[request["session_id"]] = answered + 1
                    if answered < PER_SESSION and len(samples) < stops_wanted:
                        stop_channel.answer(run_dir / "stops", request["id"], "block", f"push-back {answered}")
                        written = time.time()
                        proc_dir = Path(f"/proc/{request['pid']}")
                        while proc_dir.exists() and time.time() - written < 5:
                            time.sleep(0.0005)  # the hook process ends right after printing the block
                        samples.append((start or written, written, time.time(), len(fake.requests)))
                    else:
                        stop_channel.answer(run_dir / "stops", request["id"], "allow")
                time.sleep(0.002)

        def watcher() -> None:
            seen = 0
            while not done.is_set():
                if len(fake.requests) > seen:
                    seen = len(fake.requests)
                    arrivals.append((seen, time.time()))
                time.sleep(0.001)

        threads = [threading.Thread(target=f, daemon=True) for f in (responder, watcher)]
        for t in threads:
            t.start()
        env = {**os.environ, **fake.env(), "CLAUDE_CONFIG_DIR": str(config), "NIGHTSHIFT_RUN_DIR": str(run_dir),
               "NIGHTSHIFT_TOKEN": "bench", "NIGHTSHIFT_SHIFT": "1", "NIGHTSHIFT_HOOK_TIMEOUT": "30",
               "PYTHONPATH": str(ROOT)}
        began, sessions = time.time(), 0
        while len(samples) < stops_wanted and sessions < 2 * stops_wanted // PER_SESSION + 2:
            sessions += 1
            proc = subprocess.run(["claude", "-p", "go", "--settings", str(settings), "--output-format", "json"],
                                  cwd=work, env=env, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                break
        wall = time.time() - began
        done.set()
    shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode != 0 or len(samples) < stops_wanted:
        print(f"bench_hook: the CLI run failed (rc {proc.returncode}, {len(samples)} stops): "
              f"{proc.stderr[-300:]} {proc.stdout[-600:]}")
        return 1
    fired_to_answer, fired_to_returned, fired_to_next = [], [], []
    for started, answered, ended, seen in samples:
        fired_to_answer.append((answered - started) * 1000)
        fired_to_returned.append((ended - started) * 1000)
        nxt = next((t for n, t in arrivals if n > seen), None)
        if nxt is not None:
            fired_to_next.append((nxt - started) * 1000)
    print(f"bench_hook: real Claude Code CLI ({subprocess.run(['claude', '--version'], capture_output=True, text=True).stdout.strip()}),"
          f" {len(samples)} stops blocked in {sessions} sessions, {wall:.1f} s wall; load {os.getloadavg()[0]:.2f}")
    print(info("hook fired -> answer written (p50)", percentile(fired_to_answer, 50), "ms"))
    print(info("hook fired -> block answer returned (p50)", percentile(fired_to_returned, 50), "ms"))
    print(against_goal("hook fired -> block answer returned (p95)", percentile(fired_to_returned, 95), 300.0, "ms"))
    print(info("hook fired -> push-back reached the model API (p50, CLI included)", percentile(fired_to_next, 50), "ms"))
    print(info("hook fired -> push-back reached the model API (p95, CLI included)", percentile(fired_to_next, 95), "ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
