"""The rendered templates say what the agent must know; references hashed at init are guarded from the start."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.shift.turns import orientation_prompt, pushback_text

ROOT = Path(__file__).resolve().parent.parent


def test_init_renders_plan_notes_config_and_gitignore(tmp_path):
    written = init_workspace(tmp_path, InitOptions(goal="agree with CLASS to 0.1%", test_command="pytest -q",
                                                   verify_commands=["make lint"], agent="claude"))
    assert written == ["CLAUDE.md", "CHANGELOG.md", "nightshift.toml", ".gitignore"]
    plan = (tmp_path / "CLAUDE.md").read_text()
    for must in ("agree with CLASS to 0.1%", "## Definition of done", "## Plan", "- [ ] ",
                 "Never edit the tests or the reference outputs", "No fudge factors", "failed approach",
                 "Commit after each unit of work", "Keep test and program output short", "nightshift claim done",
                 "## Orientation protocol"):
        assert must in plan, must
    notes = (tmp_path / "CHANGELOG.md").read_text()
    for must in ("## Current status", "## Next steps", "## Failed approaches", "### 20"):
        assert must in notes
    config = load_config(tmp_path)
    assert config.goal == "agree with CLASS to 0.1%" and config.verify.commands == ["make lint"]
    assert ".nightshift/" in (tmp_path / ".gitignore").read_text()


def test_reference_dir_gives_one_comparison_per_file(tmp_path):
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "cl.dat").write_text("# 1:l 2:TT\n2 1.0\n")
    init_workspace(tmp_path, InitOptions(goal="g", reference_dir="ref"))
    config = load_config(tmp_path)
    assert [c.reference for c in config.oracle.compare] == ["ref/cl.dat"]


def test_prompts_orient_and_push_back_with_the_measured_failures():
    text = orientation_prompt("r1", 3, "goal G", {"summary": "FAIL: tests: 2 failing"})
    assert "shift 3" in text and "CHANGELOG.md" in text and "FAIL: tests: 2 failing" in text
    push = pushback_text("- oracle: TT 3.2e-2 > rtol 1e-3 at l=2", "done", ["look at the l < 30 part"])
    assert "3.2e-2 > rtol 1e-3" in push and "> look at the l < 30 part" in push and "Failed approaches" in push


def test_references_are_hashed_at_init_and_a_change_before_the_run_is_undone(tmp_path):
    import sys as _sys
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground

    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "y.dat").write_text("# 1:x 2:y\n1 1.0\n2 4.0\n")
    (tmp_path / "make.py").write_text("import pathlib\npathlib.Path('out').mkdir(exist_ok=True)\n"
                                      "pathlib.Path('out/y.dat').write_text('# 1:x 2:y\\n1 1.0\\n2 4.0\\n')\n")
    init_workspace(tmp_path, InitOptions(goal="g", reference_dir="ref", agent="command"))
    toml = tmp_path / "nightshift.toml"
    toml.write_text(toml.read_text().replace('command = ""              #', f'command = "{_sys.executable} make.py" #')
                    .replace('# command = "codex exec {prompt}"', 'command = "true"')
                    .replace('require_plan = true', 'require_plan = false')
                    .replace('require_changelog = true', 'require_changelog = false')
                    .replace('kind = "tmux"', 'kind = "local"').replace("max_shifts = 20", "max_shifts = 1")
                    .replace("max_pushbacks_per_shift = 3", "max_pushbacks_per_shift = 0"))
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s"], cwd=tmp_path, check=True)
    assert (tmp_path / ".nightshift" / "references" / "manifest.json").exists()
    (tmp_path / "ref" / "y.dat").write_text("# 1:x 2:y\n1 1.0\n2 5.0\n")  # tampered after init
    run = create_run(tmp_path, resolve_config(tmp_path))
    import threading
    threading.Thread(target=run_foreground, args=(run,), kwargs={"say": lambda _: None}, daemon=True).start()
    from tests.fixtures_core import wait_for
    verdict = wait_for(lambda: next((json.loads(l) for l in run.events.read_text().splitlines()
                                     if '"verify.finished"' in l), None), what="the first verdict")
    oracle = next(c for c in verdict["data"]["checks"] if c["name"] == "oracle")
    assert not oracle["passed"] and any("ref/y.dat" in line and "changed" in line for line in oracle["lines"])
    assert (tmp_path / "ref" / "y.dat").read_text().endswith("2 4.0\n")  # restored from the init-time copy
    from nightshift.supervisor.run.inbox import send_command
    send_command(run, "stop")
