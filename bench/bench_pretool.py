"""Benchmark: what the boundary costs an agent, against the real Claude Code CLI (issues 10 and 21).

A headless `claude -p` session against the fake Messages API on 127.0.0.1 makes N Bash tool calls (`true`). It runs
as a real turn runs: the wrapper's prologue (the resident PreToolUse helper, outside), bubblewrap, the CLI inside,
the epilogue. Variants:
  no boundary               Bash allowed, no hooks, no namespace (the anchor)
  init defaults             nightshift's namespace + the policy hooks, decided by the turn's resident helper
  namespace + plain hook    the same without the helper: a Python interpreter per call (where socat is missing)
  + Claude Code's sandbox   init defaults with [policy] claude_sandbox = true (a second layer per shell command)
  a hook that does nothing  no namespace, PreToolUse = `true`: what Claude Code itself pays to run any hook
Goals (issue 21): init defaults at most 10% slower than no boundary, and under 15 ms added per tool call.
Also: hook fired -> decision (helper and plain hook), and the namespace's start per turn and per command.

Run: .venv/bin/python bench/bench_pretool.py [--calls 200] [--rounds 3]  (variants interleaved; medians)
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
from supervisor.agents.claude_settings import claude_settings, hook_command, pretool_command  # noqa: E402
from supervisor.config.schema import parse_config  # noqa: E402
from supervisor.run.paths import RunPaths  # noqa: E402
from supervisor.sandbox.boundary import boundary_for  # noqa: E402
from supervisor.sandbox.command import command_namespace  # noqa: E402
from supervisor.sandbox.turn import turn_namespace  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, bash, text, tools  # noqa: E402


def policy_doc(ws: Path, run_dir: Path, sandbox: bool) -> dict:
    return {"v": 1, "workspace": str(ws), "plan": str(ws / "CLAUDE.md"), "writable": ["/tmp"],
            "protect": [[str(ws / "reference" / "cl.dat"), "references", "read-only"],
                        [str(ws / "nightshift.toml"), "config", "the user's"]],
            "hide": [[str(ws.parent / "heldout"), "held out"]], "network": True, "sandbox": sandbox,
            "run_dir": str(run_dir), "run_files": []}


class Bench:
    def __init__(self, tmp: Path, calls: int):
        self.calls, self.tmp = calls, tmp
        self.ws, self.config_dir = tmp / "ws", tmp / "claude-config"
        for d in (self.ws / "reference", self.config_dir):
            d.mkdir(parents=True)
        (self.ws / "reference" / "cl.dat").write_text("1 2\n")
        (self.ws / "nightshift.toml").write_text('goal = "bench"\n[agent]\nkind = "claude"\n')
        subprocess.run(["git", "init", "-q"], cwd=self.ws, check=True)
        self.run = RunPaths(self.ws / ".nightshift" / "runs" / "bench")
        self.run.root.mkdir(parents=True)
        self.boundary = boundary_for(self.ws, parse_config((self.ws / "nightshift.toml").read_text()), self.run.root)
        self.stamps = self.ws / "stamps.txt"  # written by the hook inside the namespace: the workspace is writable
        self.env = {**os.environ, "CLAUDE_CONFIG_DIR": str(self.config_dir), "NIGHTSHIFT_RUN_DIR": str(self.run.root),
                    "NIGHTSHIFT_TOKEN": "bench", "NIGHTSHIFT_SHIFT": "1", "DISABLE_TELEMETRY": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1"}
        self.turns = 0

    def settings(self, hooked: bool | str, sandbox: bool, helper: bool) -> Path:
        doc = policy_doc(self.ws, self.run.root, sandbox)
        (self.run.root / "policy.json").write_text(json.dumps(doc))
        settings = claude_settings(doc if hooked else None, None, [], [])
        if not hooked:
            settings["permissions"] = {"allow": ["Bash"]}
        else:
            hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]
            command = hooked if isinstance(hooked, str) else (
                pretool_command() if helper else hook_command("supervisor.shift.pretool"))
            # A subshell: the helper's command ends with `exit 0` (the stamps and the fork cost ~2 ms, counted).
            hook["command"] = (f"s=$(date +%s%N); ( {command} ); rc=$?; "
                               f"echo $s $(date +%s%N) >> {shlex.quote(str(self.stamps))}; exit $rc")
        path = self.run.root / f"settings-{self.turns}.json"
        path.write_text(json.dumps(settings))
        return path

    def session(self, hooked: bool | str, sandbox: bool, namespaced: bool, helper: bool) -> float:
        settings = self.settings(hooked, sandbox, helper)
        claude = (f"claude -p go --output-format json --permission-mode dontAsk "
                  f"--settings {shlex.quote(str(settings))} > /dev/null")
        self.turns += 1
        if namespaced:
            ns = turn_namespace(self.boundary, self.run, 1, f"s1t{self.turns}", [self.config_dir],
                                decisions=helper)
            inner = self.run.root / f"inner-{self.turns}.sh"
            inner.write_text(ns.inside + claude + "\n")
            script = (ns.prologue + " ".join(shlex.quote(a) for a in ns.argv) + f" bash {shlex.quote(str(inner))}\n"
                      "status=$?\n" + ns.epilogue + "exit $status\n")
        else:
            script = claude
        self.stamps.unlink(missing_ok=True)
        with FakeAnthropic([tools(bash("true")) for _ in range(self.calls)] + [text("done")]) as fake:
            started = time.monotonic()
            out = subprocess.run(["bash", "-c", script], cwd=self.ws, capture_output=True, text=True, timeout=1800,
                                 env={**self.env, **fake.env()})
            wall = time.monotonic() - started
        if out.returncode != 0:
            raise SystemExit(f"claude failed: {out.stderr[-500:]}")
        return wall

    def latencies(self) -> list[float]:
        return [(int(b) - int(a)) / 1e6 for a, b in (line.split() for line in self.stamps.read_text().splitlines())]

    def namespace_starts(self, n: int = 20) -> None:
        """bubblewrap up and down around `true`, as a turn (with the helper's prologue) and as commands."""
        for name in ("turn (bwrap + the decision helper)", "turn (bwrap alone)"):
            times = []
            for i in range(n):
                ns = turn_namespace(self.boundary, self.run, 2, f"s2t{i + 1}", [self.config_dir],
                                    decisions="helper" in name)
                script = (ns.prologue + " ".join(shlex.quote(a) for a in ns.argv) + " true\n" + ns.epilogue)
                started = time.perf_counter()
                subprocess.run(["bash", "-c", script], cwd=self.ws, env=self.env, check=True)
                times.append(1000 * (time.perf_counter() - started))
            print(info(f"namespace start, {name}, p50", percentile(times, 50), "ms"))
        for kind in ("test", "oracle"):
            times = []
            for _ in range(n):
                started = time.perf_counter()
                with command_namespace(self.boundary, kind, "true") as run:
                    subprocess.run(run.argv, cwd=self.ws, check=True)
                times.append(1000 * (time.perf_counter() - started))
            bare = []
            for _ in range(n):
                started = time.perf_counter()
                subprocess.run(["bash", "-c", "true"], cwd=self.ws, check=True)
                bare.append(1000 * (time.perf_counter() - started))
            print(info(f"namespace start, {kind} command (bash -c true: {percentile(bare, 50):.1f} ms), p50",
                       percentile(times, 50), "ms"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1, help="sessions per variant, interleaved (a loaded machine "
                                                              "drifts; the median of each is reported)")
    args = parser.parse_args()
    calls = args.calls
    bench = Bench(Path(tempfile.mkdtemp(prefix="nightshift-bench-pretool-")), calls)
    print(f"The boundary against the real Claude Code CLI ({calls} Bash tool calls per session, {args.rounds} "
          "round(s), medians)")
    walls: dict[str, list[float]] = {}
    lats: dict[str, list[float]] = {}
    for name, hooked, sandbox, namespaced, helper in args.rounds * (
            ("no boundary", False, False, False, False),
            ("init defaults (namespace + hooks, resident helper)", True, False, True, True),
            ("namespace + plain hook (no helper)", True, False, True, False),
            ("init defaults + Claude Code's sandbox", True, True, True, True),
            ("a hook that does nothing (the floor of any hook)", "true", False, False, False)):
        walls.setdefault(name, []).append(bench.session(hooked, sandbox, namespaced, helper))
        if hooked and not sandbox:
            label = "`true`" if isinstance(hooked, str) else "helper" if helper else "plain hook"
            lats.setdefault(label, []).extend(bench.latencies())
    for label, lat in lats.items():
        print(info(f"hook fired -> decision ({label}), calls", len(lat), ""))
        print(info(f"hook fired -> decision ({label}), p50", percentile(lat, 50), "ms"))
        print(info(f"hook fired -> decision ({label}), p95", percentile(lat, 95), "ms"))
    variants = {name: percentile(w, 50) for name, w in walls.items()}
    base = variants["no boundary"]
    for name, wall in variants.items():
        print(info(f"session wall time: {name}", wall, "s"))
    defaults = "init defaults (namespace + hooks, resident helper)"
    for name in list(variants)[1:]:
        slowdown = 100 * (variants[name] / base - 1)
        added = 1000 * (variants[name] - base) / calls
        if name == defaults:
            print(against_goal(f"slowdown, {name}", slowdown, 10.0, "%"))
            print(against_goal(f"added per tool call, {name}", added, 15.0, "ms"))
        else:
            print(info(f"slowdown, {name}", slowdown, "%"))
            print(info(f"added per tool call, {name}", added, "ms"))
        print(info(f"  as a share of a {MODEL_S:.0f} s model answer per call (derived)", added / 10 / MODEL_S, "%"))
    bench.namespace_starts()
    subprocess.run(["rm", "-rf", str(bench.tmp)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
