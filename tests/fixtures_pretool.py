"""A Claude Code turn as a run starts it, for the decision-helper tests (issue 30): a workspace from `nightshift init`
defaults with a visible reference, the run's compiled policy, the settings nightshift writes (PreToolUse over HTTP),
and the turn's wrapper pieces (the helper's prologue outside, bubblewrap, the CLI inside, the epilogue), with the
real CLI against the fake model. Only the model is fake."""
from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from nightshift.supervisor.agents.claude_settings import claude_settings
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.sandbox.boundary import boundary_for
from nightshift.supervisor.sandbox.turn import turn_namespace
from nightshift.supervisor.shift.policy import compile_policy, write_policy
from tests.fake_anthropic import FakeAnthropic


@dataclass
class Turn:
    out: subprocess.CompletedProcess | None
    proc: subprocess.Popen | None
    helper_folder: Path
    problems: Path


class Session:
    def __init__(self, tmp_path: Path, network: bool = True, deny: tuple[str, ...] = ()):
        self.ws = tmp_path / "ws"
        (self.ws / "reference").mkdir(parents=True)
        (self.ws / "reference" / "cl.dat").write_text("# 1:l 2:TT\n2 1.0\n3 2.0\n")
        init_workspace(self.ws, InitOptions(goal="match the reference", agent="claude", reference_dir="reference"))
        if not network:  # the one setting these tests are about
            toml = self.ws / "nightshift.toml"
            toml.write_text(toml.read_text().replace("network = true ", "network = false", 1))
        subprocess.run(["git", "init", "-q"], cwd=self.ws, check=True)
        self.config = load_config(self.ws)
        self.run = RunPaths(self.ws / ".nightshift" / "runs" / "r1")
        self.run.root.mkdir(parents=True)
        self.config_dir = tmp_path / "claude-config"
        self.config_dir.mkdir()
        self.deny = list(deny)
        self.turns = 0

    def settings(self) -> Path:
        policy = compile_policy(self.run, self.config, set(), sandbox=False)
        write_policy(self.run, policy)
        path = self.run.root / "claude-settings.json"
        path.write_text(json.dumps(claude_settings(policy, None, [], self.deny, pretool="http")))
        return path

    def script(self, before: str = "") -> tuple[str, Path, Path]:
        self.turns += 1
        settings = self.settings()
        name = f"s1t{self.turns}"
        ns = turn_namespace(boundary_for(self.ws, self.config, self.run.root), self.run, 1, name,
                            [self.config_dir], decisions=True, http_settings=settings)
        inner = self.run.root / f"inner-{self.turns}.sh"
        inner.write_text(before + ns.inside + f"claude -p go --output-format json --permission-mode dontAsk "
                                     f"--settings {shlex.quote(str(settings))}\n")
        script = ("export NIGHTSHIFT_SHIFT=1\n" + ns.prologue + " ".join(shlex.quote(a) for a in ns.argv)
                  + f" bash {shlex.quote(str(inner))}\nstatus=$?\n" + ns.epilogue + "exit $status\n")
        folder = ns.tmp.parent / f"{name}.hook"
        return script, folder, self.run.turn_file(1, self.turns, "pretool-problems")

    def env(self, fake: FakeAnthropic) -> dict[str, str]:
        import os

        return {**os.environ, **fake.env(), "CLAUDE_CONFIG_DIR": str(self.config_dir), "CLAUDE_CODE_MAX_RETRIES": "0",
                "NIGHTSHIFT_RUN_DIR": str(self.run.root), "NIGHTSHIFT_TOKEN": "tok"}

    def turn(self, fake: FakeAnthropic, before: str = "") -> Turn:
        """``before``: lines run inside the namespace before nightshift's own (a squatter on the helper's port)."""
        script, folder, problems = self.script(before)
        out = subprocess.run(["bash", "-c", script], cwd=self.ws, capture_output=True, text=True, timeout=240,
                             env=self.env(fake))
        return Turn(out, None, folder, problems)

    def start(self, fake: FakeAnthropic) -> Turn:
        script, folder, problems = self.script()
        proc = subprocess.Popen(["bash", "-c", script], cwd=self.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env(fake))
        return Turn(None, proc, folder, problems)

    def refusals(self) -> list[dict]:
        folder = self.run.root / "refusals"
        return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def tool_results(fake: FakeAnthropic) -> list[dict]:
    """Every tool_result the CLI sent back to the model, in order (what the agent read)."""
    seen, out = set(), []
    for req in fake.message_requests():
        for msg in req.body.get("messages", []):
            if msg.get("role") != "user" or not isinstance(msg.get("content"), list):
                continue
            for block in msg["content"]:
                if block.get("type") == "tool_result" and block["tool_use_id"] not in seen:
                    seen.add(block["tool_use_id"])
                    content = block.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    out.append({"error": bool(block.get("is_error")), "text": text})
    return out
