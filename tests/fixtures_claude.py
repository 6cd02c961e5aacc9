"""The real Claude Code CLI against the fake Messages API: a private CLAUDE_CONFIG_DIR seeded so no first-run
dialog appears (see shared/notes/claude-code-offline.md), and a nightshift.toml for a claude workspace."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fixtures_core import require_tool

CONFIG = """
goal = "make check.txt say ok"

[agent]
kind = "claude"
mode = "{mode}"
max_pushbacks_per_shift = {pushbacks}
hook_timeout = "60s"
context_window = {context_window}

[backend]
kind = "{backend}"

[limits]
max_shifts = 3
max_cost_usd = {max_cost}

[verify]
test_command = "test \\"$(cat check.txt)\\" = ok"
require_changelog = false
require_plan = false
"""


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    """A fake API and the env that points the real CLI at it; yields (fake, seed(workspace))."""
    require_tool("claude")
    config_dir = tmp_path / "claude-config"
    config_dir.mkdir()
    with FakeAnthropic([]) as fake:
        for key, value in fake.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")

        def seed(workspace, mode="interactive", backend="tmux", pushbacks=3, max_cost=0, context_window=200000,
                 extra=""):
            (config_dir / ".claude.json").write_text(json.dumps({
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
                "projects": {str(workspace.resolve()): {"hasTrustDialogAccepted": True}}}))
            (workspace / "nightshift.toml").write_text(CONFIG.format(
                mode=mode, backend=backend, pushbacks=pushbacks, max_cost=max_cost, context_window=context_window) + extra)
            subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup"],
                           cwd=workspace, check=True)
        yield fake, seed


def claim(summary: str) -> str:
    return f"nightshift claim done --summary '{summary}'"


PY = sys.executable
