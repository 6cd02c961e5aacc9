"""Where the pieces of a verdict came from, beyond the attesting process's versions: nightshift's own source (the
digest of its installed files, and the git commit when it runs from a checkout: a version string alone says
nothing of an edited install), the oracle command's environment (its interpreter and that interpreter's packages,
read from the files on disk: nothing is run, the command may name the agent's own venv), and the repository's URI
for the commit subject (credentials stripped; none without a remote).
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from nightshift.supervisor.attest.digests import sha256_path
from nightshift.supervisor.run.untrusted import read_leaf
from nightshift.supervisor.version import SOURCE, source_commit

SOURCE_FOLDERS = ("supervisor", "hpc", "tui", "templates")  # what the `nightshift` distribution installs


@lru_cache(maxsize=1)
def source_digest() -> str:
    """sha256 over `sha256sum`-style lines of every installed file of nightshift (bytecode caches left out)."""
    root, lines = SOURCE, []
    for top in SOURCE_FOLDERS:
        for folder, dirs, files in os.walk(root / top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = Path(folder) / name
                try:
                    lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(root)}\n")
                except OSError:
                    continue
    return hashlib.sha256("".join(sorted(lines, key=lambda s: s[66:])).encode()).hexdigest()


def nightshift_source() -> dict[str, Any]:
    """{"sha256": the installed files' digest, "git_commit": the commit the code came from (its checkout's HEAD, or
    the commit an installed package was built from), None when unknown}."""
    return {"sha256": source_digest(), "git_commit": source_commit()[0]}


def _packages(prefixes: list[Path]) -> list[str]:
    """name==version of every distribution installed under these prefixes (from *.dist-info folder names)."""
    found: set[str] = set()
    for prefix in prefixes:
        for lib in prefix.glob("lib/python3*/*-packages"):
            try:
                names = os.listdir(lib)
            except OSError:
                continue
            for name in names:
                match = re.fullmatch(r"(.+?)-([^-]+)\.dist-info", name)
                if match:
                    found.add(f"{match.group(1).replace('_', '-').lower()}=={match.group(2)}")
    return sorted(found)


def oracle_environment(command: str | None, workspace: Path) -> dict[str, Any] | None:
    """The oracle command's interpreter (path, digest) and, for a Python, its version and packages."""
    try:
        argv = shlex.split(command or "")
    except ValueError:
        return None
    while argv and (re.fullmatch(r"\w+=.*", argv[0]) or argv[0] in ("env", "exec", "nice", "time")):
        argv = argv[1:]
    if not argv:
        return None
    first = argv[0]
    path = Path(first) if "/" in first else (Path(shutil.which(first)) if shutil.which(first) else None)
    if path is not None and not path.is_absolute():
        path = workspace / path
    if path is None:
        return {"interpreter": first, "path": None, "sha256": None}
    out: dict[str, Any] = {"interpreter": first, "path": str(path), "sha256": None}
    try:
        out["sha256"] = sha256_path(path.resolve())[0]
    except OSError:
        pass
    if re.fullmatch(r"python[0-9.]*", path.name):
        venv = path.parent.parent
        cfg = venv / "pyvenv.cfg"
        try:  # the agent's own venv, perhaps: a regular file only, never a link followed or a FIFO waited on
            text = read_leaf(cfg, limit=64 << 10).decode(errors="replace")
        except OSError:  # none, or not a regular file (untrusted.Untrusted)
            text = None
        match = re.search(r"^version(?:_info)?\s*=\s*(\S+)", text or "", re.M)
        version = match.group(1) if match else None
        prefixes = [venv] + ([] if text is not None else [path.resolve().parent.parent])
        out.update(python=version or path.resolve().name, packages=_packages(prefixes))
    return out


def repository_uri(workspace: Path) -> str | None:
    """The origin remote as a URI (git+https://host/path, git+ssh://...), user and password left out."""
    from nightshift.supervisor.attest.gitnotes import git
    proc = git(workspace, "config", "--get", "remote.origin.url", check=False)
    url = proc.stdout.decode(errors="replace").strip()
    if not url:
        return None
    scp = re.fullmatch(r"(?:[^@/]+@)?([^:/]+):(.+)", url)
    if scp and "://" not in url:
        return f"git+ssh://{scp.group(1)}/{scp.group(2).lstrip('/')}"
    parts = urlsplit(url)
    if not parts.scheme or parts.scheme == "file":
        return None  # a path on the run's machine: private, and no referee can reach it
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    scheme = parts.scheme if parts.scheme.startswith("git+") else f"git+{parts.scheme}"
    return urlunsplit((scheme, netloc, parts.path, "", ""))
