"""`nightshift init` with no terminal (issue 40): --yes answers every question, including --trust's; without --yes
a question nobody can answer is one line naming the fix, non-zero, and nothing is written (an answer piped in is
taken: tests/test_check.py). The real CLI in a subprocess whose stdin is /dev/null, as in a script, a CI job or a
batch job.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def init(folder: Path, *args: str, claude_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "init", str(folder), *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLAUDE_CONFIG_DIR": str(claude_dir)})


def trusted(claude_dir: Path, folder: Path) -> bool:
    config = claude_dir / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    return bool(data.get("projects", {}).get(str(folder.resolve()), {}).get("hasTrustDialogAccepted"))


def one_line(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nightshift: ") and "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_trust_with_yes_and_no_terminal_answers_every_question(tmp_path):
    folder, claude_dir = tmp_path / "ws", tmp_path / "claude"
    folder.mkdir(), claude_dir.mkdir()
    out = init(folder, "--trust", "--yes", claude_dir=claude_dir)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert (folder / "nightshift.toml").is_file() and trusted(claude_dir, folder)
    assert "trust for" in out.stdout and "recorded" in out.stdout


def test_trust_without_yes_and_no_terminal_is_one_line_and_writes_nothing(tmp_path):
    folder, claude_dir = tmp_path / "ws", tmp_path / "claude"
    folder.mkdir(), claude_dir.mkdir()
    one_line(init(folder, "--trust", claude_dir=claude_dir), "input ended", "workspace trust", "--yes")
    assert not (folder / "nightshift.toml").exists() and not trusted(claude_dir, folder)
    # an existing workspace, trust only: the same line; with --yes it is recorded
    assert init(folder, "--goal", "g", claude_dir=claude_dir).returncode == 0
    one_line(init(folder, "--trust", claude_dir=claude_dir), "--yes")
    assert not trusted(claude_dir, folder)
    recorded = init(folder, "--trust", "-y", claude_dir=claude_dir)
    assert recorded.returncode == 0 and trusted(claude_dir, folder), recorded.stdout + recorded.stderr


def test_no_terminal_without_yes_takes_what_was_found(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    out = init(folder, claude_dir=tmp_path)  # no question is asked of a closed stdin
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert (folder / "nightshift.toml").is_file()
