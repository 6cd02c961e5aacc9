"""Issue 27, item 1: the table of every process nightshift runs or starts (supervisor/sandbox/README.md, linked
from the README) is kept true. A module that starts a process (subprocess, tmux, git through GitPython or the guard) without a row fails here, and so does a row for a
module that no longer starts one. And the workspace's reader refuses what it must (item 4), as a unit."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from nightshift.supervisor.run import untrusted

ROOT = Path(__file__).resolve().parent.parent
STARTS = re.compile(r"subprocess\.(run|Popen|check_output|check_call)\(|\bPopen\(|os\.exec|os\.spawn|libtmux\.|"
                    r"\brun_git\(|\bopen_repo\(|\brepo\.git\.[a-z_]+\(|\.git\.execute\(|\bpython_(line|argv)\(")


def _starts_a_process(path: Path) -> bool:
    for line in path.read_text().splitlines():
        code = line.split("#", 1)[0]
        if STARTS.search(code):
            return True
    return False


def _rows() -> dict[str, str]:
    text = (ROOT / "supervisor" / "sandbox" / "README.md").read_text()
    section = text.split("## The other side: nightshift's own processes", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| ((?:supervisor|hpc|tui)/[\w/]+\.py) \|.*$", section,
                                                      re.M)}


def test_every_module_that_starts_a_process_has_a_row_and_every_row_a_module():
    found = {str(p.relative_to(ROOT)) for top in ("supervisor", "hpc", "tui") for p in (ROOT / top).rglob("*.py")
             if _starts_a_process(p)}
    rows = _rows()
    missing = sorted(found - set(rows))
    assert not missing, f"modules that start a process with no row in supervisor/sandbox/README.md: {missing}"
    stale = sorted(set(rows) - found)
    assert not stale, f"supervisor/sandbox/README.md rows for modules that start no process: {stale}"
    for module, row in rows.items():
        assert row.count("|") == 5, f"{module}: a row has its four columns"
    assert "supervisor/sandbox/README.md" in (ROOT / "README.md").read_text()  # linked from the README


@pytest.fixture
def tree(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "out"
    (ws / "sub").mkdir(parents=True)
    out.mkdir()
    (out / "secret").write_text("SECRET")
    (ws / "notes.md").write_text("mine")
    os.symlink("../out/secret", ws / "rel-out")
    os.symlink(str(out / "secret"), ws / "abs-out")
    os.symlink("notes.md", ws / "inside")
    os.symlink("../notes.md", ws / "sub" / "up-inside")
    os.symlink("sub", ws / "dirlink")
    os.symlink(str(out), ws / "dir-out")
    os.mkfifo(ws / "fifo")
    os.symlink("gone.md", ws / "dangling")
    return ws


@pytest.mark.parametrize("path,why", [
    ("rel-out", "symlink out of the workspace (to ../out/secret)"),
    ("abs-out", "symlink out of the workspace"),
    ("dir-out/secret", "symlink out of the workspace"),
    ("fifo", "is a FIFO, not a regular file"),
    ("sub", "is a folder"),
    ("../out/secret", "leads out of the workspace"),
])
def test_a_link_out_or_a_special_file_is_refused_with_its_path(tree, path, why):
    with pytest.raises(untrusted.Untrusted) as info:
        untrusted.read_text(tree, path)
    assert why in str(info.value) and path in str(info.value)
    assert not untrusted.is_file(tree, path)


def test_a_link_to_a_missing_target_is_named_and_reads_as_missing(tree):
    with pytest.raises(FileNotFoundError) as info:  # a reader asking "is it there?" gets its answer
        untrusted.read_text(tree, "dangling")
    assert isinstance(info.value, untrusted.Untrusted)  # and a finding, for a reader that names what it refuses
    assert str(info.value) == "dangling is a symlink to a missing target (gone.md): not read"
    with pytest.raises(FileNotFoundError) as plain:
        untrusted.read_text(tree, "never-there")
    assert not isinstance(plain.value, untrusted.Untrusted) and not untrusted.is_file(tree, "dangling")


@pytest.mark.parametrize("path", ["notes.md", "inside", "sub/up-inside", "dirlink/up-inside"])
def test_links_that_stay_inside_are_followed(tree, path):
    assert untrusted.read_text(tree, path) == "mine"


def test_restoring_through_a_planted_link_writes_inside_only(tree):
    target = tree.parent / "out" / "secret"
    os.symlink(str(tree.parent / "out"), tree / "tests")  # a folder swapped for a link out
    untrusted.write_beneath(tree, "tests/test_x.py", b"kept")
    assert target.read_text() == "SECRET" and not (tree.parent / "out" / "test_x.py").exists()
    assert (tree / "tests").is_dir() and not (tree / "tests").is_symlink()
    assert (tree / "tests" / "test_x.py").read_bytes() == b"kept"
    untrusted.write_beneath(tree, "abs-out", b"kept")
    assert target.read_text() == "SECRET" and (tree / "abs-out").read_bytes() == b"kept"
    (tree / "made-a-folder").mkdir()
    (tree / "made-a-folder" / "work.txt").write_text("the agent's")
    with pytest.raises(untrusted.Untrusted, match="is a folder now"):
        untrusted.write_beneath(tree, "made-a-folder", b"kept")
    assert (tree / "made-a-folder" / "work.txt").read_text() == "the agent's"  # never deleted to restore a file
