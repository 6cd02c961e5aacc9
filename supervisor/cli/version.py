"""`nightshift --version`: the installed version and the commit the code came from, so a bug report names both.

The commit is read, never computed by running git: from the source checkout the code runs from (an editable
install or a clone on the path), else from the folder or VCS URL pip recorded when it installed the package
(PEP 610's direct_url.json). Reading a few small files keeps it cheap and runs nothing a repository configures.
"""
from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

SOURCE = Path(__file__).resolve().parents[2]  # the folder holding supervisor/ (a checkout when not installed)
SHA = re.compile(r"[0-9a-f]{40}")


def version_line() -> str:
    dist = _distribution()
    version = dist.version if dist else "unknown (not installed: run `make install` or `pipx install .`)"
    return f"nightshift {version} ({source_commit(dist)})"


def _distribution() -> metadata.Distribution | None:
    """The distribution that installed this code: the one named nightshift when it holds our package (an unrelated
    project has that name on PyPI), else whichever does (read from every installed dist: slower, so second)."""
    top = __name__.split(".")[0]
    try:
        dist = metadata.distribution("nightshift")
        if top in (dist.read_text("top_level.txt") or "").split():
            return dist
    except metadata.PackageNotFoundError:
        pass
    for name in metadata.packages_distributions().get(top, []):
        return metadata.distribution(name)
    return None


def source_commit(dist: metadata.Distribution | None) -> str:
    """'commit <sha> from <folder>', or 'source commit unknown' with why."""
    for folder in (SOURCE, _recorded_folder(dist)):
        if folder is not None:
            sha, branch = read_head(folder)
            if sha:
                return f"commit {sha[:12]}{f' on {branch}' if branch else ''}, {folder}"
    recorded = _direct_url(dist).get("vcs_info", {}).get("commit_id", "")
    if SHA.fullmatch(str(recorded)):
        return f"commit {recorded[:12]}, installed from {_direct_url(dist).get('url')}"
    return "source commit unknown: not installed from a git checkout"


def _direct_url(dist: metadata.Distribution | None) -> dict:
    try:
        return json.loads((dist.read_text("direct_url.json") if dist else None) or "{}")
    except ValueError:
        return {}


def _recorded_folder(dist: metadata.Distribution | None) -> Path | None:
    url = _direct_url(dist).get("url", "")
    return Path(unquote(urlparse(url).path)) if url.startswith("file://") else None


def read_head(folder: Path) -> tuple[str | None, str | None]:
    """(HEAD's sha, its branch or None) of the git checkout at ``folder``, from the files; (None, None) if none."""
    try:
        gitdir = folder / ".git"
        if gitdir.is_file():  # a worktree or submodule: "gitdir: <path>"
            gitdir = (folder / gitdir.read_text().split(":", 1)[1].strip()).resolve()
        head = (gitdir / "HEAD").read_text().strip()
        if SHA.fullmatch(head):
            return head, None
        ref = head.removeprefix("ref: ").strip()
        common = gitdir / (gitdir / "commondir").read_text().strip() if (gitdir / "commondir").is_file() else gitdir
        for base in (gitdir, common):  # a worktree's refs live in the common folder
            if (base / ref).is_file():
                return (base / ref).read_text().strip()[:40], ref.removeprefix("refs/heads/")
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref) and SHA.fullmatch(line[:40]):
                return line[:40], ref.removeprefix("refs/heads/")
    except (OSError, IndexError, ValueError):
        pass
    return None, None
