"""The README's five-minute tutorial works as written: its fenced `sh` blocks, run in order by bash in a fresh folder
with a throwaway HOME and the real CLI on PATH (this venv's bin, where `pipx install .` would put `nightshift`), all
succeed, and the run they start ends verified done. Real git, tmux, pytest and (where it works) bubblewrap."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_core import require_tool

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Five minutes: a first run of your own"


def tutorial_blocks(text: str | None = None) -> list[str]:
    """The tutorial's shell blocks, in order, as written."""
    text = README.read_text(encoding="utf-8") if text is None else text
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```$", section, re.M | re.S)


def tutorial_env(home: Path) -> dict[str, str]:
    """A stranger's shell: a fresh HOME with git's name set, nightshift on PATH, nothing of nightshift's inherited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIGHTSHIFT_", "XDG_", "GIT_", "TMUX"))}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = A Scientist\n\temail = scientist@example.org\n")
    return env


def run_tutorial(where: Path) -> subprocess.CompletedProcess:
    """Every block in one bash (a `cd` carries over, as in a terminal), stopping at the first command that fails."""
    script = "set -euo pipefail\n" + "\n".join(tutorial_blocks())
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["bash", "-c", script], cwd=where, env=tutorial_env(where / "home"), capture_output=True,
                          text=True, timeout=600)


def test_the_tutorial_has_the_steps_the_readme_promises():
    commands = "\n".join(tutorial_blocks())
    for step in ("nightshift init", "nightshift check", "nightshift run", "nightshift wait", "nightshift report"):
        assert re.search(rf"^{step}\b", commands, re.M), f"the tutorial lacks `{step}`"
    assert 'kind = "command"' not in commands or "agent.sh" in commands


@pytest.mark.timeout(900)  # check runs the tests twice, run its preflight again: past the suite's 300 s
def test_every_command_of_the_tutorial_runs_as_written(tmp_path):
    for tool in ("git", "tmux", "bash"):
        require_tool(tool)
    proc = run_tutorial(tmp_path / "t")
    ws = tmp_path / "t" / "decay"
    try:
        assert proc.returncode == 0, f"the tutorial failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "ready: nothing found that would stop a run" in proc.stdout
        assert re.search(r"^run \S+: verified done \(exit 0\)", proc.stdout, re.M), proc.stdout[-2000:]
        assert "VERIFIED DONE at commit" in proc.stdout
        assert 'METHOD = "rk4"' in (ws / "solver.py").read_text()  # the agent was pushed back, then fixed it
        assert list((ws / ".nightshift" / "runs").glob("*/report.html"))
    finally:
        for run_dir in (ws / ".nightshift" / "runs").glob("*"):
            subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)
