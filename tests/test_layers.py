"""The architecture holds: each room imports only the rooms its docstring names, no module imports another in a
circle, and the headless core never imports textual. The rules are read from the docstrings themselves, so the
map a reader sees is the map that is enforced."""
from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nightshift.hpc
import nightshift.supervisor
from tests.layers import ROOT, circles, face_violations, module_graph, room_graph, violations


def test_every_import_follows_its_rooms_docstring():
    found = violations()
    assert not found, "imports against the arrows:\n" + "\n".join(found)


def test_every_group_of_the_face_follows_its_docstring():
    found = face_violations()
    assert not found, "\n".join(found)


def test_no_module_imports_another_in_a_circle():
    found = circles(module_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_core_never_reaches_the_faces_and_the_contract_stands_alone():
    rooms = room_graph()
    for room, targets in rooms.items():
        if room not in ("cli", "hpc", "tui"):
            assert not targets & {"cli", "hpc", "tui"}, f"{room} imports {targets & {'cli', 'hpc', 'tui'}}"
    assert rooms["run"] <= {"errors"} and rooms["config"] <= {"errors"}
    assert "cli" not in rooms["tui"] and "cli" not in rooms["hpc"]


@pytest.fixture
def tree(tmp_path) -> Path:
    for top in ("supervisor", "hpc", "tui"):
        shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _append(path: Path, line: str) -> int:
    text = path.read_text()
    path.write_text(text + line + "\n")
    return text.count("\n") + 1


def test_a_violation_fails_with_the_offending_import_named(tree):
    line = _append(tree / "supervisor" / "run" / "paths.py", "from supervisor.shift.loop import Supervisor")
    lazy = tree / "supervisor" / "verify" / "checks.py"
    lazy_line = _append(lazy, "def _later():\n    import tui.app")
    found = violations(tree)
    assert any(v.startswith(f"supervisor/run/paths.py:{line}: run imports supervisor.shift.loop (room 'shift')")
               and "run may import: errors" in v for v in found), found
    assert any(v.startswith(f"supervisor/verify/checks.py:{lazy_line + 1}: verify imports tui.app") for v in found), found
    assert len(found) == 2, found


def test_a_room_without_its_rule_and_a_circle_are_named(tree):
    init = tree / "supervisor" / "backends" / "__init__.py"
    init.write_text(init.read_text().replace("May import: errors, config, run.", ""))
    assert any("room 'backends' has no 'May import:' line" in v for v in violations(tree))
    _append(tree / "supervisor" / "run" / "events.py", "import supervisor.run.state")
    assert ["supervisor.run.events", "supervisor.run.state"] in circles(module_graph(tree))


def headless_modules() -> list[str]:
    names = []
    for package in (nightshift.supervisor, nightshift.hpc):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", headless_modules())
def test_headless_modules_never_import_textual(module):
    code = f"import sys, importlib; importlib.import_module({module!r}); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
