"""The references in the verdict's tree (verdict_tree.py): where the workspace has them, for the tests to read;
the oracle command's namespace hides them as it hides the workspace's. Without a namespace they leave the tree while
the command runs. Copied only when the source or the copy changed.
"""
from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.verify.verdict_tree import clear_place, identity

REFERENCES = "references.json"  # path -> [the source's stat, the copy's (inode, ctime_ns)] of each reference placed


def place_references(tree: Path, workspace: Path, visible: list[Path]) -> dict[tuple[int, int], str]:
    """The visible references, as the workspace holds them now (the oracle restored any the agent changed), copied
    to their places in the tree: read-only for the tests, absent for the oracle command (its namespace hides them,
    as in the workspace). Copied only when the source or the copy changed (REFERENCES: the stat of both).
    Returns {(st_dev, st_ino): path} of the copies (a candidate that is one of them is refused, as a reference)."""
    home, ws = Path(tree).parent, Path(workspace).resolve()
    try:
        known = json.loads((home / REFERENCES).read_text())
    except (OSError, ValueError):
        known = {}
    placed = {}
    for source in visible:
        if not source.is_relative_to(ws) or not source.is_file():
            continue
        rel = str(source.relative_to(ws))
        st = source.stat()
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        target = Path(tree) / rel
        if known.get(rel, [None])[0] != stamp or known[rel][1] != identity(target):
            target = clear_place(Path(tree), rel.split("/"))
            shutil.copyfile(source, target, follow_symlinks=False)
        placed[rel] = [stamp, identity(target)]
    (home / REFERENCES).write_text(json.dumps(placed))
    copies = {}
    for rel in placed:
        try:
            st = os.stat(Path(tree) / rel)
        except OSError:
            continue
        copies[(st.st_dev, st.st_ino)] = rel
    return copies


@contextmanager
def references_aside(tree: Path, workspace: Path, visible: list[Path]):
    """Where no namespace hides them: the tree's copies of the references leave it while the command runs."""
    home, ws = Path(tree).parent, Path(workspace).resolve()
    aside = make_private_dir(home / "aside")
    moved = []
    for n, source in enumerate(visible):
        target = Path(tree) / source.relative_to(ws) if source.is_relative_to(ws) else None
        if target is not None and (target.exists() or target.is_symlink()) and not target.is_dir():
            os.replace(target, aside / str(n))
            moved.append((aside / str(n), target))
    try:
        yield
    finally:
        for held, target in moved:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(held, target)
