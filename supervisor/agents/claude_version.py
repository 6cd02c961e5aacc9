"""Which Claude Code CLI a run starts, and whether it has what nightshift's per-call hook needs: an HTTP hook that
fails closed (``"type": "http"`` with ``"onFailure": "block"``, first in 2.1.295). An older CLI gets the command
hook: a CLI that does not know a hook's type or key may ignore the settings file as a whole (print mode ignores a
settings file that fails validation), which would leave every call undecided; so the version is asked first.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

HTTP_HOOK_FIRST = (2, 1, 295)  # the first release whose HTTP hooks take onFailure: "block"
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_cache: dict[tuple[str, float], tuple[int, ...] | None] = {}


def cli_version(claude_bin: str) -> tuple[int, ...] | None:
    """(major, minor, patch) of ``claude --version``, or None when it cannot be run or read; asked once per binary
    (and again when the binary changes: an update between turns)."""
    path = shutil.which(claude_bin)
    if path is None:
        return None
    try:
        key = (os.path.realpath(path), os.stat(path).st_mtime)
    except OSError:
        return None
    if key not in _cache:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                                 stdin=subprocess.DEVNULL)
            found = _VERSION.search(out.stdout or "") if out.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            found = None
        _cache[key] = tuple(int(g) for g in found.groups()) if found else None
    return _cache[key]


def http_hook_problem(claude_bin: str) -> str | None:
    """Why this CLI cannot take the fail-closed HTTP hook (one line), or None when it can."""
    version = cli_version(claude_bin)
    first = ".".join(map(str, HTTP_HOOK_FIRST))
    if version is None:
        return f"the version of {claude_bin} could not be read (`{claude_bin} --version`)"
    if version < HTTP_HOOK_FIRST:
        return (f"Claude Code {'.'.join(map(str, version))} is older than {first}, the first release whose HTTP "
                f"hooks fail closed (update it: npm install -g @anthropic-ai/claude-code)")
    return None
