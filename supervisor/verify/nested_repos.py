"""Nested repositories and gitlinks the agent added: a folder with its own .git inside the workspace, or a gitlink
(a submodule entry, mode 160000) in HEAD or the index that the run's starting commit did not have. Either makes
the user's own `git status`, `diff` or `submodule status` run git inside a repository whose config the agent wrote
(core.fsmonitor runs a program). Never committed by nightshift (commit_refusals.py); the verdict fails, naming
each with how to remove it. The user's own nested repositories and submodules, there when the run began, are left
alone.
"""
from __future__ import annotations

from pathlib import Path

from nightshift.supervisor.commit_refusals import gitlinks_added, refused_paths
from nightshift.supervisor.verify.checks import Check


def check_nested_repos(ws: Path, changed: list[str], run_base: str | None, before: dict[str, str]) -> Check:
    """``changed``: the paths git reports now; ``before``: the user's dirty and untracked paths when the run began
    (RunPaths.prerun), whose repositories are theirs."""
    found = refused_paths(ws, [p for p in changed if p not in before]).get("nested_repo", [])
    folders = [p.rstrip("/") for p in found]
    links = gitlinks_added(ws, run_base)
    lines = [f"{p} is a repository of its own inside the workspace (it has a .git): the user's git would run "
             f"inside it; remove {p}/.git, or keep it outside the workspace (never committed)" for p in folders]
    lines += [f"{p} is a gitlink (a submodule entry) added during the run: the user's git would run inside it; "
              f"`git rm --cached {p}` and commit its files as files, or ask the person" for p in links
              if p not in folders]
    if not lines:
        return Check("nested", True, "nested: no repository inside the workspace was added")
    return Check("nested", False, f"nested: {len(lines)} repository(ies) added inside the workspace", lines[:8])
