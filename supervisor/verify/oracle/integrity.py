"""Reference integrity: hash every reference when the run starts, keep private copies, and before each
comparison restore any reference the agent changed or deleted (reporting it, which fails the verdict).

Visible references are copied into the run's ``references/`` store (0700). Held-out references never enter
the workspace: they are copied to ``<user state>/heldout/<run>-<hash>/`` with their manifest beside them, so
nothing under the workspace (which the agent can read, ``.nightshift/`` included) names or holds their data.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.verify.oracle.readers import split_part
from nightshift.supervisor.run.paths import heldout_store, make_private_dir  # noqa: F401 - heldout_store: callers import it here
from nightshift.supervisor.run.private import write_private_json

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import OracleConfig

MANIFEST = "manifest.json"


def sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _write_json(path: Path, data: dict) -> None:
    write_private_json(path, data, indent=1)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _private_copy(src: Path, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o600)
    os.replace(tmp, dest)


def resolve(workspace: Path, spec: str) -> Path:
    path = Path(spec).expanduser()
    return path if path.is_absolute() else Path(workspace) / path


def protect_references(cfg: OracleConfig, workspace: Path, store: Path) -> dict:
    """Hash and copy every reference not yet protected (a resumed run keeps its first copies). Returns the
    workspace manifest (visible references only); held-out ones are listed in their private store."""
    store = make_private_dir(Path(store))
    manifest = _read_json(store / MANIFEST) or {"v": 1, "created": time.time(), "references": {}}
    held = None
    for n, comp in enumerate(cfg.compare):
        path, _part = split_part(comp.reference)
        src = resolve(workspace, path)
        if not src.is_file():
            continue  # reported as a missing reference when compared
        if comp.heldout:
            hdir = make_private_dir(heldout_store(store))
            held = held if held is not None else (_read_json(hdir / MANIFEST) or {"v": 1, "heldout": {}})
            if comp.name not in held["heldout"]:
                copy = hdir / f"{n:03d}-{src.name}"
                _private_copy(src, copy)
                held["heldout"][comp.name] = {"source": str(src), "copy": copy.name, "sha256": sha256_of(copy)}
            continue
        if path in manifest["references"]:
            continue
        make_private_dir(store / "files")
        copy = store / "files" / f"{len(manifest['references']):03d}-{src.name}"
        _private_copy(src, copy)
        manifest["references"][path] = {"sha256": sha256_of(copy), "size": copy.stat().st_size,
                                        "copy": str(copy.relative_to(store))}
    if held is not None:
        _write_json(heldout_store(store) / MANIFEST, held)
    _write_json(store / MANIFEST, manifest)
    return manifest


def restore_references(workspace: Path, store: Path) -> list[str]:
    """Put back every protected reference that was changed or deleted; one message per reference."""
    manifest = _read_json(Path(store) / MANIFEST)
    if not manifest:
        return []
    messages = []
    for rel, entry in manifest.get("references", {}).items():
        target = resolve(workspace, rel)
        if target.is_file() and not target.is_symlink() and sha256_of(target) == entry["sha256"]:
            continue
        what = "changed" if target.exists() or target.is_symlink() else "deleted"
        copy = Path(store) / entry["copy"]
        if not copy.is_file() or sha256_of(copy) != entry["sha256"]:
            messages.append(f"reference {rel} was {what} in the workspace, and its private copy is gone too; "
                            "restore it by hand (git checkout) before the next verdict")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_dir():
            target.unlink() if target.is_symlink() else shutil.rmtree(target)
        tmp = target.with_name(f".{target.name}.nightshift-restore")
        shutil.copyfile(copy, tmp)
        os.replace(tmp, target)
        messages.append(f"reference {rel} was {what} in the workspace; nightshift restored it from the run's "
                        "private copy (references are read-only: fix the candidate, not the reference)")
    return messages


def heldout_reference(store: Path | None, name: str, configured: Path) -> tuple[Path, str | None]:
    """The file to compare a held-out entry against: its private copy when the run protected it (checked
    against its hash), else the configured path. The second value is an integrity problem, if any."""
    if store is None:
        return configured, None
    hdir = heldout_store(store)
    entry = (_read_json(hdir / MANIFEST) or {}).get("heldout", {}).get(name)
    if entry is None:
        return configured, None
    copy = hdir / entry["copy"]
    if copy.is_file() and sha256_of(copy) == entry["sha256"]:
        return copy, None
    if configured.is_file() and sha256_of(configured) == entry["sha256"]:
        _private_copy(configured, copy)  # the original is intact: the private copy is made again from it
        return copy, None
    state = "is missing" if not configured.exists() else "differs from the file the run began with"
    return configured, (f"held-out reference {name!r} is unavailable: its private copy in {hdir} was changed or "
                        f"removed and {configured} {state}; put the original file back at {configured}, then "
                        "`nightshift resume`")
