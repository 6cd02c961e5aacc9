"""What a run's verdicts rest on, committed when the run begins: nightshift.toml, CLAUDE.md (the Definition of
done) and the visible references inside the workspace, where they are untracked or differ from HEAD. An attestation
names them by their digest at the verified commit, so a run that followed the README (init, edit, check, run: the
user never committed) must still leave them in git, where a referee's fresh clone finds them.

Only these paths are committed (the user's other dirty or staged files stay as they were); an ignored reference,
one a filter driver would rewrite, or one over [verify] max_commit_mb is left out and named: the attestation still
carries its digest, and a referee gives it with `verify-result --references DIR`.
"""
from __future__ import annotations

from pathlib import Path

from nightshift.supervisor import gitops
from nightshift.supervisor.config import CONFIG_NAME

MESSAGE = "nightshift: the run's ground (nightshift.toml, CLAUDE.md, references) as the run begins"


def ground_paths(config) -> list[str]:
    """nightshift.toml, CLAUDE.md and each visible reference given inside the workspace (its file, not its part)."""
    from nightshift.supervisor.attest.config_view import file_of
    out = [CONFIG_NAME, "CLAUDE.md"]
    for comp in config.oracle.compare if config.oracle else []:
        path = Path(file_of(comp.reference)).expanduser()
        if not comp.heldout and not path.is_absolute() and ".." not in path.parts:
            out.append(path.as_posix())
    return list(dict.fromkeys(out))


def commit_ground(repo, workspace: Path, config) -> tuple[str | None, list[str], list[str]]:
    """(the commit made or None, the paths it holds, the paths left out with why)."""
    changed = [p for p in gitops.worktree_changes(repo, ground_paths(config)) if (Path(workspace) / p).is_file()]
    if not changed:
        return None, [], []
    filtered, refused = gitops.never_committed(repo, changed, int(config.verify.max_commit_mb * (1 << 20)))
    never = filtered | {p for names in refused.values() for p in names}
    left = [f"{p} (a filter driver)" for p in sorted(filtered)] + \
        [f"{p} ({kind})" for kind, names in refused.items() for p in names]
    paths = [p for p in changed if p not in never]
    if not paths:
        return None, [], left
    return gitops.commit_only(repo, paths, MESSAGE), paths, left
