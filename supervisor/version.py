"""nightshift's version and the commit its code came from (`nightshift --version`, the attestation's source), so a
bug report or a referee names both.

The commit is read, never computed by running git: from the source checkout the code runs from (an editable
install), else the commit the installed package was built from (setuptools-scm writes it into _version.py at the
build, from the clone `pipx install .` was given). Reading a few small files keeps it cheap and runs nothing a
repository configures.

May import: nothing.
"""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "nightshift-hpc"  # the name on the package index ("nightshift" there is an unrelated project)
SOURCE = Path(__file__).resolve().parents[1]  # the folder holding supervisor/: a checkout, or site-packages/nightshift
SHA = re.compile(r"[0-9a-f]{40}")


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        built = _built()
        return built[0] if built else "unknown (not installed: run `make install` or `pipx install .`)"


def _built() -> tuple[str, str | None] | None:
    """(version, commit id) written at the build (supervisor/_version.py), or None before any build."""
    try:
        from nightshift.supervisor import _version
    except ImportError:
        return None
    commit = getattr(_version, "commit_id", None)
    return _version.version, (commit[1:] if commit and commit.startswith("g") else commit)


def source_commit() -> tuple[str | None, str]:
    """(the commit, where it was read) of the code this process runs; (None, why) when it cannot be known."""
    sha, branch = read_head(SOURCE)
    if sha:
        return sha, f"{f'on {branch}, ' if branch else ''}checkout {SOURCE}"
    built = _built()
    if built and built[1]:
        return built[1], "the commit it was built from"
    return None, "source commit unknown: not built from a git checkout"


def version_line() -> str:
    sha, where = source_commit()
    # the public part only: a build's local part (+g<commit>) is the commit of its install, named beside it anyway
    return f"nightshift {version().split('+')[0]} ({f'commit {sha[:12]}, {where}' if sha else where})"


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
