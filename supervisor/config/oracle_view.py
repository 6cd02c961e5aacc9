"""The [oracle] section of a nightshift.toml that was validated before, without loading pydantic (and the
settings its command's boundary is made of).

`nightshift compare` is called again and again on the same file (by the user, by the agent in its turn), and
loading pydantic and building the schema is most of a whole-process compare on a mid-sized table (about 0.13 s
and 20 MB of a 0.4 s run). So after a full validation the oracle section is kept, as JSON, in the user's cache
(``$XDG_CACHE_HOME/nightshift/oracle-config/``), under a key made of the file's exact bytes, the workspace and
the code that validates it; a later compare of the same bytes reads it back as plain read-only records. A
changed file, or another nightshift, misses and is validated again in full. The cache lives outside the
workspace: inside nightshift's namespace the agent can read it but not write it, and nothing a run decides
reads it (the supervisor validates its own frozen config).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from nightshift.supervisor.config import CONFIG_NAME
from nightshift.supervisor.config.oracle_rules import OracleChoices

_CODE = Path(__file__).resolve().parent  # the validating code: a change to any of it is a miss
KEEP = 64


class Record:
    """Read-only attribute access to one validated table (a comparison, a per_column override)."""

    def __init__(self, fields: dict[str, Any]):
        object.__setattr__(self, "_fields", fields)
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._fields!r})"


class CompareView(Record):
    def __init__(self, fields: dict[str, Any]):
        fields = dict(fields)
        fields["per_column"] = {k: Record(v) for k, v in fields.get("per_column", {}).items()}
        if fields.get("range") is not None:
            fields["range"] = tuple(fields["range"])
        super().__init__(fields)


class OracleView(Record, OracleChoices):
    def __init__(self, fields: dict[str, Any]):
        super().__init__({**fields, "compare": [CompareView(c) for c in fields.get("compare", [])]})

    def model_copy(self, update: dict[str, Any]) -> "OracleView":
        """The same section with some fields replaced (the name pydantic's models give it, so callers need not
        know which of the two they hold)."""
        copy = object.__new__(OracleView)
        Record.__init__(copy, {**self._fields, **update})
        return copy


def _key(workspace: Path, text: bytes) -> str:
    digest = hashlib.sha256(text)
    digest.update(b"\0" + str(Path(workspace).resolve()).encode())
    for source in sorted(_CODE.glob("*.py")):
        stat = source.stat()
        digest.update(f"\0{source.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nightshift" / "oracle-config"


class ConfigView:
    """What `nightshift compare` reads of a validated nightshift.toml: [oracle], and the settings the oracle
    command's boundary is made of ([policy], the backend's kind, the held-out tests' store), so the user's and the
    agent's compare run the command inside the boundary the run's verdict gives it (sandbox/boundary.py)."""

    def __init__(self, saved: dict[str, Any]):
        self.oracle = OracleView(saved["oracle"]) if isinstance(saved.get("oracle"), dict) else None
        self.policy = Record(saved["policy"])
        self.backend = Record(saved["backend"])
        self.verify = Record(saved["verify"])


def cached_config(workspace: Path) -> tuple[ConfigView | None, str | None]:
    """(the validated sections, or None to validate in full; the key to keep them under, None if the file is
    unreadable: the full validation says why)."""
    try:
        text = (Path(workspace) / CONFIG_NAME).read_bytes()
    except OSError:
        return None, None
    key = _key(workspace, text)
    try:
        saved = json.loads((_folder() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, key
    if not isinstance(saved, dict) or saved.get("key") != key or \
            not all(isinstance(saved.get(k), dict) for k in ("policy", "backend", "verify")):
        return None, key
    return ConfigView(saved), key


def keep_config(workspace: Path, key: str | None, config) -> None:
    """After a full validation: the sections for the next compare of the same bytes (best effort: a read-only
    cache, as inside the namespace, only means validating in full next time)."""
    if key is None or config is None:
        return
    folder = _folder()
    saved = {"key": key, "oracle": config.oracle.model_dump(mode="json") if config.oracle is not None else None,
             "policy": config.policy.model_dump(mode="json"), "backend": {"kind": config.backend.kind},
             "verify": {"heldout_tests": config.verify.heldout_tests}}
    try:
        if _key(workspace, (Path(workspace) / CONFIG_NAME).read_bytes()) != key:
            return  # the file changed while it was validated: what was validated is not what the key names
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        old = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for stale in old[:max(0, len(old) - KEEP)]:  # one per version of a file: the newest few are enough
            stale.unlink(missing_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(saved, handle)
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        pass
