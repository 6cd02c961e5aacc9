"""The test configuration that selects a suite's tests: the files pytest reads to decide what runs (every conftest.py
on the way to a test, and the rootdir's pytest.ini, tox.ini, setup.cfg or pyproject.toml), the startup files
Python runs before it (sitecustomize.py, usercustomize.py), and the plugins it loads by entry point from a folder
on its path (a *.dist-info or *.egg-info whose entry_points.txt has a [pytest11] section: `PYTHONPATH=.` puts the
workspace's own on it). A *.pth file is read only in a site folder, which a verdict's tree is not. The test ratchet keeps
them with the files of its tests: an edit there can deselect, skip or xfail a test without touching it.
"""
from __future__ import annotations

from pathlib import Path


def config_files(workspace: Path, test_files: set[Path]) -> set[Path]:
    """The test configuration that selects ``test_files``: every conftest.py from the workspace down to each test's
    folder, and pytest.ini, .pytest.ini, tox.ini, setup.cfg and pyproject.toml in those folders (pytest looks for
    its rootdir's configuration there; the shared files only with a pytest section). Regular files only: a link
    is not followed."""
    ws = workspace.resolve()
    folders: set[Path] = set()
    for path in test_files:
        try:
            rel = path.resolve().parent.relative_to(ws)
        except ValueError:
            continue
        folder = ws
        folders.add(folder)
        for part in rel.parts:
            folder = folder / part
            folders.add(folder)
    found = set()
    for folder in folders:
        for name, section in SELECTING.items():
            path = folder / name
            if path.is_file() and not path.is_symlink() and (section is None or section in _text(path)):
                found.add(path)
        found |= _entry_points(folder)
    return found


def _entry_points(folder: Path) -> set[Path]:
    """The plugins pytest would load from ``folder`` by entry point (never through a link)."""
    out = set()
    for pattern in ("*.dist-info/entry_points.txt", "*.egg-info/entry_points.txt"):
        for path in folder.glob(pattern):
            if not path.parent.is_symlink() and path.is_file() and not path.is_symlink() \
                    and "[pytest11]" in _text(path):
                out.add(path)
    return out


# Files pytest reads to decide what runs, and the section that makes a shared file one of them (a pyproject.toml
# without a pytest section is the project's, not the tests', and stays the agent's to edit).
SELECTING = {"conftest.py": None, "pytest.ini": None, ".pytest.ini": None, "tox.ini": "[pytest]",
             "setup.cfg": "[tool:pytest]", "pyproject.toml": "[tool.pytest",
             # run by Python itself at startup where the command's PYTHONPATH (often ".") reaches them: before pytest,
             # they can patch its reports (issue #46)
             "sitecustomize.py": None, "usercustomize.py": None}


# The files that are pytest's configuration and nothing else: one the agent adds beside kept tests is moved aside.
WHOLE_FILE = ("conftest.py", "pytest.ini", ".pytest.ini", "sitecustomize.py", "usercustomize.py", "entry_points.txt")


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
