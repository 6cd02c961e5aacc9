"""Benchmark: what the boundary costs an agent, against the real Claude Code CLI (issues 10, 21 and 30).

A headless `claude -p` session against the fake Messages API on 127.0.0.1 makes N Bash tool calls (`true`). It runs
as a real turn runs: the wrapper's prologue (the resident PreToolUse helper, outside), bubblewrap, the CLI inside,
the epilogue. Variants:
  no boundary                    Bash allowed, no hooks, no namespace (the anchor)
  init defaults                  nightshift's namespace + the policy hook over HTTP to the turn's resident helper
  command hook through socat     issue 21's init defaults: a shell and socat to the same helper, per call
  namespace + plain hook         no helper: a Python interpreter per call (a CLI older than HTTP hooks, no socat)
  + Claude Code's sandbox        init defaults with [policy] claude_sandbox = true (a second layer per shell command)
  a hook that does nothing       no namespace, PreToolUse = `true`: what Claude Code pays to start any command hook
  Landlock tier + HTTP hook      issue 47's tier where no namespace can be made (user namespaces off, no bubblewrap):
                                 the launcher's Landlock and seccomp, the helper on the host's loopback
Goals (issue 30): init defaults at most 10% slower than no boundary and at most 5 ms added per tool call; hook
fired -> decision p95 under 5 ms (for HTTP: a POST of a tool call to a running helper over a kept-alive connection,
as the CLI sends it; for the command hooks: stamps taken by the hook's own shell). Also: the namespace's start per
turn and per command.

Run: .venv/bin/python bench/bench_pretool.py [--calls 200] [--rounds 3]  (variants interleaved; medians)
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

MODEL_S = 3.0  # seconds a real model takes to answer a tool result: a low figure for Sonnet-class models
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import against_goal, info, percentile  # noqa: E402
from nightshift.supervisor.agents.claude_settings import claude_settings, hook_command, pretool_command  # noqa: E402
from nightshift.supervisor.config.schema import parse_config  # noqa: E402
from nightshift.supervisor.run.paths import RunPaths  # noqa: E402
from nightshift.supervisor.sandbox.boundary import boundary_for  # noqa: E402
from nightshift.supervisor.sandbox.command import command_namespace  # noqa: E402
from nightshift.supervisor.sandbox.turn import turn_namespace  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, bash, text, tools  # noqa: E402


@contextmanager
def landlock_tier():
    """The boundary as a machine without user namespaces gives it (sandbox/tier.py's landlock), on this one: the
    tier and the namespace's absence forced where the boundary reads them, nothing else changed."""
    from nightshift.supervisor.sandbox import boundary as boundary_module, landlock, tier
    forced = tier.Tier(tier.LANDLOCK, "bench: the tier without a namespace", landlock.abi())
    saved = boundary_module.tier_for, boundary_module.namespace_problem
    boundary_module.tier_for = lambda mode: forced
    boundary_module.namespace_problem = lambda mode: "bench: no namespace"
    try:
        yield
    finally:
        boundary_module.tier_for, boundary_module.namespace_problem = saved


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

    def settings(self, hook: str, sandbox: bool) -> Path:
        """``hook``: "" (none), "http", "socat" (the command hook through the helper), "plain" or a command."""
        doc = policy_doc(self.ws, self.run.root, sandbox)
        (self.run.root / "policy.json").write_text(json.dumps(doc))
        settings = claude_settings(doc if hook else None, None, [], [], pretool="http" if hook == "http" else "command")
        if not hook:
            settings["permissions"] = {"allow": ["Bash"]}
        elif hook != "http":
            entry = settings["hooks"]["PreToolUse"][0]["hooks"][0]
            command = {"socat": pretool_command(), "plain": hook_command("nightshift.supervisor.shift.pretool")}.get(hook, hook)
            # A subshell: the helper's command ends with `exit 0` (the stamps and the fork cost ~2 ms, counted).
            entry["command"] = (f"s=$(date +%s%N); ( {command} ); rc=$?; "
                                f"echo $s $(date +%s%N) >> {shlex.quote(str(self.stamps))}; exit $rc")
        path = self.run.root / f"settings-{self.turns}.json"
        path.write_text(json.dumps(settings))
        return path

    def session(self, hook: str, sandbox: bool, namespaced: bool) -> float:
        settings = self.settings(hook, sandbox)
        claude = (f"claude -p go --output-format json --permission-mode dontAsk "
                  f"--settings {shlex.quote(str(settings))} > /dev/null")
        self.turns += 1
        if namespaced:  # True: bubblewrap's namespace; "landlock": the tier without one
            with landlock_tier() if namespaced == "landlock" else nullcontext():
                ns = turn_namespace(self.boundary, self.run, 1, f"s1t{self.turns}", [self.config_dir],
                                    decisions=hook in ("http", "socat"),
                                    http_settings=settings if hook == "http" else None, nested=sandbox)
            inner = self.run.root / f"inner-{self.turns}.sh"
            inner.write_text(ns.inside + claude + "\n")  # as a turn's inner script starts (argv ends in the scope)
            script = (ns.prologue + " ".join(shlex.quote(a) for a in ns.argv) + f" bash {shlex.quote(str(inner))}\n"
                      "status=$?\n" + ns.epilogue + "exit $status\n")
        elif hook == "http":  # no namespace: the helper as a turn starts it, on the host's loopback
            folder = self.tmp / f"bare-helper-{self.turns}"
            folder.mkdir()
            helper = (f"{shlex.quote(sys.executable)} -m nightshift.supervisor.shift.pretool_server "
                      f"{shlex.quote(str(folder / 's'))} --http host --settings {shlex.quote(str(settings))}")
            script = (f"(cd {shlex.quote(str(ROOT))} && exec {helper}) &\nh=$!\n"
                      f"for i in $(seq 500); do [ -S {shlex.quote(str(folder / 's'))} ] && break; sleep 0.02; done\n"
                      f"{claude}\nstatus=$?\nkill $h\nexit $status\n")
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
        if hook == "http" and json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["url"].endswith(
                ":1/pretool"):
            raise SystemExit("the helper never pointed the HTTP hook at itself: the session measured refusals")
        return wall

    def http_latencies(self, n: int) -> list[float]:
        """A running helper (as a turn starts it, host loopback), asked n tool calls as Claude Code asks them: one
        kept-alive connection, a POST of the call's JSON, the decision read whole."""
        settings = self.settings("http", False)
        folder = self.tmp / "bench-helper"
        folder.mkdir(exist_ok=True)
        helper = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.shift.pretool_server", str(folder / "s"),
                                   "--http", "host", "--settings", str(settings)], cwd=ROOT, env=self.env)
        try:
            for _ in range(500):
                if (folder / "s").exists():
                    break
                time.sleep(0.02)
            url = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["url"]
            host_port, path = url[len("http://"):].split("/", 1)
            conn = http.client.HTTPConnection(host_port, timeout=30)
            body = json.dumps({"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": "true", "description": "run a command"},
                               "cwd": str(self.ws), "permission_mode": "dontAsk"}).encode()
            times = []
            for _ in range(n):
                started = time.perf_counter()
                conn.request("POST", "/" + path, body, {"Content-Type": "application/json"})
                answer = conn.getresponse().read()
                times.append(1000 * (time.perf_counter() - started))
                assert answer == b"{}", answer
            conn.close()
            return times
        finally:
            helper.terminate()
            helper.wait(timeout=30)

    def latencies(self) -> list[float]:
        return [(int(b) - int(a)) / 1e6 for a, b in (line.split() for line in self.stamps.read_text().splitlines())]

    def namespace_starts(self, n: int = 20) -> None:
        """bubblewrap up and down around `true`, as a turn (with the helper's prologue) and as commands."""
        for name in ("turn (bwrap + the decision helper)", "turn (bwrap alone)", "turn (Landlock launcher alone)"):
            times = []
            for i in range(n):
                with landlock_tier() if "Landlock" in name else nullcontext():
                    ns = turn_namespace(self.boundary, self.run, 2 + ("Landlock" in name), f"s2t{i + 1}",
                                        [self.config_dir], decisions="helper" in name)
                script = (ns.prologue + " ".join(shlex.quote(a) for a in ns.argv) + " true\n" + ns.epilogue)
                started = time.perf_counter()
                subprocess.run(["bash", "-c", script], cwd=self.ws, env=self.env, check=True)
                times.append(1000 * (time.perf_counter() - started))
            print(info(f"namespace start, {name}, p50", percentile(times, 50), "ms"))
        for kind in ("test", "oracle", "test (Landlock launcher)"):
            times = []
            for _ in range(n):
                started = time.perf_counter()
                with landlock_tier() if "Landlock" in kind else nullcontext():
                    with command_namespace(self.boundary, kind.split()[0], "true") as run:
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
    parser.add_argument("--no-claude-sandbox", action="store_true", help="skip the variant with Claude Code's own "
                                                                           "sandbox (~90 s a session on 2 cores)")
    args = parser.parse_args()
    calls = args.calls
    bench = Bench(Path(tempfile.mkdtemp(prefix="nightshift-bench-pretool-")), calls)
    print(f"The boundary against the real Claude Code CLI ({calls} Bash tool calls per session, {args.rounds} "
          "round(s), medians)")
    walls: dict[str, list[float]] = {}
    lats: dict[str, list[float]] = {}
    defaults = "init defaults (namespace + HTTP hook to the helper)"
    plan = (("no boundary", "", False, False),
                (defaults, "http", False, True),
                ("namespace + command hook through socat (issue 21)", "socat", False, True),
                ("namespace + plain hook (no helper)", "plain", False, True),
                ("init defaults + Claude Code's sandbox", "http", True, True),
                ("a command hook that does nothing", "true", False, False),
                # where init defaults' time goes: the HTTP hook alone, and the namespace alone
                ("part: HTTP hook to the helper, no namespace", "http", False, False),
                ("part: namespace, no hook", "", False, True),
                ("Landlock tier + HTTP hook (no namespace: issue 47)", "http", False, "landlock"),
                ("part: Landlock tier, no hook", "", False, "landlock"))
    if args.no_claude_sandbox:
        plan = tuple(v for v in plan if not v[2])
    for name, hook, sandbox, namespaced in args.rounds * plan:
        walls.setdefault(name, []).append(bench.session(hook, sandbox, namespaced))
        if hook in ("socat", "plain", "true"):
            label = {"socat": "command hook through socat", "plain": "plain hook", "true": "`true`"}[hook]
            lats.setdefault(label, []).extend(bench.latencies())
    lats = {"HTTP to the helper": bench.http_latencies(calls * args.rounds), **lats}
    for label, lat in lats.items():
        print(info(f"hook fired -> decision ({label}), calls", len(lat), ""))
        print(info(f"hook fired -> decision ({label}), p50", percentile(lat, 50), "ms"))
        if label == "HTTP to the helper":
            print(against_goal(f"hook fired -> decision ({label}), p95", percentile(lat, 95), 5.0, "ms"))
        else:
            print(info(f"hook fired -> decision ({label}), p95", percentile(lat, 95), "ms"))
    variants = {name: percentile(w, 50) for name, w in walls.items()}
    base = variants["no boundary"]
    for name, wall in variants.items():
        print(info(f"session wall time: {name}", wall, "s"))
    alone = variants.get("part: namespace, no hook")
    if alone:  # on a busy machine the namespace alone can beat no boundary (a PID namespace has few processes to
        # list): the hook's own cost is init defaults against the namespace alone, same environment
        print(info("init defaults against the namespace alone (the hook's own cost)",
                   100 * (variants[defaults] / alone - 1), "%"))
        print(info("  per tool call", 1000 * (variants[defaults] - alone) / calls, "ms"))
    for name in list(variants)[1:]:
        slowdown = 100 * (variants[name] / base - 1)
        added = 1000 * (variants[name] - base) / calls
        if name == defaults:
            print(against_goal(f"slowdown, {name}", slowdown, 10.0, "%"))
            print(against_goal(f"added per tool call, {name}", added, 5.0, "ms"))
        else:
            print(info(f"slowdown, {name}", slowdown, "%"))
            print(info(f"added per tool call, {name}", added, "ms"))
        print(info(f"  as a share of a {MODEL_S:.0f} s model answer per call (derived)", added / 10 / MODEL_S, "%"))
    bench.namespace_starts()
    subprocess.run(["rm", "-rf", str(bench.tmp)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
