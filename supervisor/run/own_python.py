"""How nightshift starts its own Python processes, and the guard that keeps the workspace out of their imports.

Every Python process nightshift starts outside the agent's namespace (the supervisor, the fleet, a Slurm chain
job, the watchdog's revive, notify's report) runs ``python -E -P -m MODULE`` from a folder that is not the
workspace: -P keeps the current folder off sys.path (``python -m`` would put it first), -E keeps a user's
PYTHONPATH/PYTHONSTARTUP out. The supervisor and the fleet also install ``ImportGuard``: a module that would load
from under a workspace or a lane's worktree is refused with the file named, and the supervisor fails closed
(supervisor.crashed names it) instead of running code the agent wrote.
"""
from __future__ import annotations

import importlib.abc
import os
import shlex
import sys
from pathlib import Path

FLAGS = ("-E", "-P")
# The folder that holds supervisor/, hpc/ and tui/: the repository, or site-packages/nightshift once installed
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def bare_code(module: str) -> str:
    """Code for ``python -S -E -P -c`` that runs ``module.main(argv)``. Without site no installer's finder is loaded,
    so the import package `nightshift` is made here, its path the folder its subpackages live in; nothing else
    (no site-packages, no current folder) is on the path."""
    return (f"import sys, types; n = types.ModuleType('nightshift'); n.__path__ = [{str(PACKAGE_ROOT)!r}]; "
            f"sys.modules['nightshift'] = n; from {module} import main; sys.exit(main(sys.argv[1:]))")


def bare_argv(module: str, *args: str) -> list[str]:
    """This installation's Python running ``module.main(argv)`` the fastest way, as the hooks and the namespace's
    helpers and probes start: no site (-S), no user PYTHON* variables (-E), nothing of the current folder (the
    workspace: a file named json.py there could replace a module they import) on the path (-P)."""
    return [sys.executable, "-S", "-E", "-P", "-c", bare_code(module), *args]


def python_argv(module: str, *args: str) -> list[str]:
    return [sys.executable, *FLAGS, "-m", module, *args]


def python_line(module: str, *args: str) -> str:
    """The same as one shell line (tmux, cron, a batch script)."""
    return shlex.join(python_argv(module, *args))


def guard_roots(workspace: Path) -> list[Path]:
    """The workspace and, for a lane's worktree (inside a workspace's .nightshift/), that workspace too."""
    ws = Path(workspace).resolve()
    roots = [ws]
    for parent in ws.parents:
        if parent.name == ".nightshift":
            roots.append(parent.parent)
    return roots


class WorkspaceImport(ImportError):
    """A module would have been imported from a workspace: refused."""


class ImportGuard(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: asks the other finders, and refuses a module whose file is under a guarded root."""

    def __init__(self, roots: list[Path]):
        self.roots = [os.path.realpath(r).rstrip("/") + "/" for r in roots]

    def _guarded(self, origin: str | None) -> bool:
        if not origin or origin in ("built-in", "frozen"):
            return False
        real = os.path.realpath(origin)
        return any(real.startswith(r) for r in self.roots)

    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None:
                continue
            places = [spec.origin, *(spec.submodule_search_locations or [])]
            bad = next((p for p in places if self._guarded(p)), None)
            if bad:
                raise WorkspaceImport(f"refused to import {name} from {bad}: it is inside the workspace, where the "
                                      "agent writes; nightshift runs no code from there (install nightshift and its "
                                      "Python outside the workspace)")
            return spec
        return None


def install_import_guard(roots: list[Path]) -> ImportGuard:
    """Guard this process: the workspace's folders leave sys.path, and no module loads from under ``roots``."""
    guard = ImportGuard(roots)
    exact = {r.rstrip("/") for r in guard.roots}
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.getcwd()) not in exact]
    for existing in [f for f in sys.meta_path if isinstance(f, ImportGuard)]:
        sys.meta_path.remove(existing)
    sys.meta_path.insert(0, guard)
    sys.path_importer_cache.clear()
    return guard
