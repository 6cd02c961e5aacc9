"""The few git calls of attestations, all plumbing, none of which runs anything the repository names: hooks off
(core.hooksPath=/dev/null), no fsmonitor, pager or editor, no filters (plumbing reads objects as stored), no prompt.

- the envelopes kept as a note on the verified commit under ``refs/notes/nightshift`` (one JSON line per
  statement, in-toto's bundle form: a run's later attestation of the same verdict replaces its lines);
- whether a commit is in the repository, a file's bytes at a commit;
- a commit's tree written into a fresh folder from the object store (what `verify-result --rerun` runs in):
  paths are checked, files created exclusively and never through a link, links made last.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.gitguard import cat_file_batch, safe_env

NOTES_REF = "refs/notes/nightshift"
SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
        "-c", "core.editor=true", "-c", "credential.helper=", "-c", "protocol.allow=never"]
ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": "true", "GIT_OPTIONAL_LOCKS": "0"}


class GitProblem(UserError):
    pass


def git_env(repo: Path) -> dict[str, str]:
    """The environment of our git processes: the project's guard (supervisor/gitguard.py: every hook, driver and
    program the configuration names switched off), over the switches above."""
    return safe_env(Path(repo), {**os.environ, **ENV})


def git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *SAFE, "-C", str(repo), *args], input=stdin, capture_output=True,
                          env=git_env(repo), timeout=600)
    if check and proc.returncode:
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitProblem(f"git {args[0]} failed in {repo}: {said[-1] if said else proc.returncode}")
    return proc


def commit_of(repo: Path, ref: str) -> str | None:
    """The full sha of ``ref`` when it names a commit of the repository, else None."""
    proc = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def blob_at(repo: Path, commit: str, path: str) -> bytes | None:
    proc = git(repo, "cat-file", "blob", f"{commit}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def read_note(repo: Path, commit: str) -> list[str]:
    """The attestation lines of the note on ``commit`` (none: [])."""
    proc = git(repo, "notes", f"--ref={NOTES_REF}", "show", commit, check=False)
    return [line for line in proc.stdout.decode(errors="replace").splitlines() if line.strip()]


def _same_verdict(line: str, run_id: str, verdict: int) -> bool:
    try:
        return json.loads(line).get("nightshift", {}) == {"run": run_id, "verdict": verdict}
    except (ValueError, AttributeError):
        return False


def add_note(repo: Path, commit: str, envelopes: list[dict], run_id: str, verdict: int) -> None:
    """Keep ``envelopes`` (nightshift's statement and the standard ones beside it) in the note on ``commit``, a JSON
    line each, in place of that verdict's earlier lines (`git push origin refs/notes/nightshift` publishes it)."""
    tag = {"run": run_id, "verdict": verdict}
    new = [json.dumps({**envelope, "nightshift": tag}, separators=(",", ":")) for envelope in envelopes]
    lines = [old for old in read_note(repo, commit) if not _same_verdict(old, run_id, verdict)] + new
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        git(repo, *_identity(repo), "notes", f"--ref={NOTES_REF}", "add", "-f", "-F", fh.name, commit)
    finally:
        os.unlink(fh.name)


def _identity(repo: Path) -> list[str]:
    """The user's identity for the note's commit, else nightshift's (as gitops does for its commits)."""
    if git(repo, "config", "--get", "user.email", check=False).returncode == 0 and \
            git(repo, "config", "--get", "user.name", check=False).returncode == 0:
        return []
    from nightshift.supervisor.gitops import FALLBACK_IDENTITY  # here: GitPython loads only when the user has no identity
    return ["-c", f"user.name={FALLBACK_IDENTITY[0]}", "-c", f"user.email={FALLBACK_IDENTITY[1]}"]


def _safe_parts(path: bytes) -> list[str]:
    text = path.decode("utf-8", "surrogateescape")
    parts = PurePosixPath(text).parts
    if not parts or text.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise GitProblem(f"the commit holds a path nightshift will not write: {text!r}")
    return list(parts)


def _batch(repo: Path, shas: list[str]):
    """The blobs of ``shas``, streamed (gitguard.cat_file_batch) by this module's guarded git."""
    return cat_file_batch(["git", *SAFE, "-C", str(repo), "cat-file", "--batch"], git_env(repo), shas)


def _write_blob(dest: Path, parts: list[str], mode: str, stream, size: int) -> None:
    folder = dest.joinpath(*parts[:-1])
    folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.resolve().is_relative_to(dest.resolve()):
        raise GitProblem(f"the commit's path {'/'.join(parts)} leaves the fresh tree")
    fd = os.open(folder / parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                 0o755 if mode == "100755" else 0o644)
    with os.fdopen(fd, "wb") as fh:
        left = size
        while left:
            chunk = stream.read(min(left, 1 << 20))
            if not chunk:
                raise GitProblem(f"git cat-file ended inside {'/'.join(parts)}")
            fh.write(chunk)
            left -= len(chunk)


def write_tree(repo: Path, commit: str, dest: Path) -> list[str]:
    """Write ``commit``'s files into the empty folder ``dest``; returns notes (submodules not written)."""
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).stdout
    entries, notes = [], []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        if kind == "commit":
            notes.append(f"submodule {path.decode(errors='replace')} is not written (its commit is not here)")
            continue
        entries.append((mode, sha, _safe_parts(path)))
    links = []
    with _batch(repo, [sha for _m, sha, _p in entries]) as blobs:
        for mode, sha, parts in entries:
            header = blobs.readline().split()
            if len(header) != 3 or header[0].decode() != sha:
                raise GitProblem(f"git cat-file did not give blob {sha} of {'/'.join(parts)}")
            size = int(header[2])
            if mode == "120000":
                links.append((parts, blobs.read(size)))
            else:
                _write_blob(dest, parts, mode, blobs, size)
            blobs.read(1)  # the newline after each object
    for parts, target in links:  # last, so no file above was written through one of them
        folder = dest.joinpath(*parts[:-1])
        folder.mkdir(parents=True, exist_ok=True)
        os.symlink(target.decode("utf-8", "surrogateescape"), folder / parts[-1])
    return notes
