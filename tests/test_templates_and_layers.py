"""The rendered templates say what the agent must know, and the headless core never imports textual."""
from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import hpc
import supervisor
from supervisor.config import load_config
from supervisor.init import InitOptions, init_workspace
from supervisor.turns import orientation_prompt, pushback_text

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


def headless_modules() -> list[str]:
    names = []
    for package in (supervisor, hpc):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", headless_modules())
def test_headless_modules_never_import_textual(module):
    code = f"import sys, importlib; importlib.import_module({module!r}); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
