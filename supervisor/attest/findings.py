"""The lines of a check: each thing named either holds, does not (a mismatch: which digest, which figure, by how
much), or could not be checked here (missing, with the name `--allow-missing` takes). Exit 0 only when nothing
mismatches and every missing thing was allowed by name.

Two kinds of line never fail a check, and both are said aloud rather than left out: what only the run's machine
had (its event log is not in git: a referee on a fresh clone names it, it is no failure), and the claims of the
predicate nothing here could check, listed as "stated by the signer, not checked" (never silently trusted).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.attest.digests import sha256_path


@dataclass
class Findings:
    allowed: set[str] = field(default_factory=set)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (kind, text): ok | MISMATCH | MISSING | UNSIGNED | note |
    # elsewhere (only the run's machine had it) | stated (the signer's word, not checked) | skipped (not ours)
    checked: set[str] = field(default_factory=set)  # the predicate's claims some line above measured
    sandbox: str | None = None  # the attested boundary's tier (the last line names it where it is not full)

    def claim(self, *names: str) -> None:
        """Mark claims of the predicate as checked (held or not): the rest are listed as the signer's word."""
        self.checked.update(names)

    def elsewhere(self, text: str) -> None:
        self.lines.append(("elsewhere", text))

    def stated(self, text: str) -> None:
        self.lines.append(("stated by the signer, not checked", text))

    def skipped(self, text: str) -> None:
        self.lines.append(("skipped", text))

    def ok(self, text: str) -> None:
        self.lines.append(("ok", text))

    def mismatch(self, text: str) -> None:
        self.lines.append(("MISMATCH", text))

    def note(self, text: str) -> None:
        self.lines.append(("note", text))

    def missing(self, name: str, text: str) -> None:
        if name in self.allowed or "all" in self.allowed:
            self.lines.append(("allowed", f"{text} (allowed: --allow-missing {name})"))
        else:
            self.lines.append(("MISSING", f"{text}; `--allow-missing {name}` accepts that"))

    def unsigned(self, text: str) -> None:
        """No signature, and nothing says there was one: no failure, but never VERIFIED (the verb says what it
        still proves); `--allow-missing signature` accepts it."""
        if "signature" in self.allowed or "all" in self.allowed:
            self.lines.append(("allowed", f"{text} (allowed: --allow-missing signature)"))
        else:
            self.lines.append(("UNSIGNED", text))

    @property
    def is_unsigned(self) -> bool:
        return any(kind == "UNSIGNED" for kind, _ in self.lines)

    @property
    def failed(self) -> int:
        return sum(kind in ("MISMATCH", "MISSING") for kind, _ in self.lines)

    def render(self) -> list[str]:
        return [f"{kind}: {text}" for kind, text in self.lines]


class DigestFinder:
    """Files found by digest in folders the checker names (and nightshift's private store of held-out copies):
    only files of the attested size are hashed, each at most once; links are never followed."""

    def __init__(self, folders: list[Path]):
        self.folders = [Path(f) for f in folders if Path(f).is_dir()]
        self._sizes: dict[int, list[Path]] | None = None
        self._digests: dict[Path, str] = {}

    def _index(self) -> dict[int, list[Path]]:
        if self._sizes is None:
            self._sizes = {}
            for folder in self.folders:
                for top, _dirs, files in os.walk(folder, followlinks=False):
                    for name in files:
                        path = Path(top) / name
                        try:
                            st = path.lstat()
                        except OSError:
                            continue
                        if path.is_file() and not path.is_symlink():
                            self._sizes.setdefault(st.st_size, []).append(path)
        return self._sizes

    def find(self, sha256: str, size: int | None) -> Path | None:
        sizes = self._index()
        candidates = sizes.get(size, []) if size is not None else [p for ps in sizes.values() for p in ps]
        for path in candidates:
            if path not in self._digests:
                try:
                    self._digests[path] = sha256_path(path)[0]
                except OSError:
                    self._digests[path] = ""
            if self._digests[path] == sha256:
                return path
        return None
