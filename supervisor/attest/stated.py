"""What a checker can say of the claims no file here holds: nightshift's own version and source (held to this very
install when its digest is the attested one), the repository's URI (held to this clone's origin when it has one),
and, at the end, every claim nothing checked, listed by name with its value as "stated by the signer, not checked"
(the machine's description, figures not measured again): a referee sees what rests on the signer's word.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from nightshift.supervisor.attest.findings import Findings
from nightshift.supervisor.version import version as nightshift_version

# (claim, how to show its value): in the predicate's order; a claim some check marked is left out
CLAIMS = (
    ("result", lambda p: f"passed={p['result'].get('passed')}, summary {str(p['result'].get('summary'))[:60]!r}"),
    ("run", lambda p: f"verdict {p['run'].get('verdict')} at {p['run'].get('verified_at')}, shift "
                      f"{p['run'].get('shift')} turn {p['run'].get('turn')}"),
    ("commit", lambda p: f"the verdict's commit {str(p.get('commit'))[:12]} (--rerun measures it)"),
    ("comparisons.figures", lambda p: f"{len(p.get('comparisons') or [])} comparison(s)' worst errors (--rerun "
                                      "measures them)"),
    ("tests.summary", lambda p: repr((p.get("tests") or {}).get("summary"))),
    ("tests.passed", lambda p: repr((p.get("tests") or {}).get("passed"))),
    ("tests.ids", lambda p: f"{len(((p.get('tests') or {}).get('ratchet') or {}).get('ids') or [])} ratchet test "
                            "id(s) (--rerun runs them)"),
    ("tests.flaky", lambda p: f"{len((p.get('tests') or {}).get('flaky') or [])} flaky test(s) and the baseline"),
    ("judge.verdict", lambda p: repr((p.get("judge") or {}).get("verdict"))),
    ("heldout", lambda p: f"{(p.get('heldout') or {}).get('evaluations')} held-out evaluation(s), "
                          f"{(p.get('heldout') or {}).get('bits_released')} bits released"),
    ("run_totals", lambda p: f"{(p.get('run_totals') or {}).get('shifts')} shift(s), "
                             f"{(p.get('run_totals') or {}).get('hours')} h, ${(p.get('run_totals') or {}).get('cost_usd')}"),
    ("environment.nightshift", lambda p: f"nightshift {p['environment'].get('nightshift')} (source sha256 "
                                         f"{str((p['environment'].get('nightshift_source') or {}).get('sha256'))[:16]}…)"),
    ("environment", lambda p: _machine(p.get("environment") or {})),
    ("subject.uri", lambda p: next((s.get("uri") for s in p.get("_subjects") or [] if s.get("uri")), None)),
)


def _machine(env: dict[str, Any]) -> str:
    agent = env.get("agent") or {}
    oracle = env.get("oracle_command") or {}
    parts = [f"python {env.get('python')}", f"numpy {env.get('numpy')}", f"os {env.get('os')}",
             f"cpu {env.get('cpu')}", f"agent {agent.get('kind')} {agent.get('version') or ''} model "
             f"{agent.get('model')}".replace("  ", " "),
             f"oracle interpreter {oracle.get('path')} ({len(oracle.get('packages') or [])} packages)"]
    if env.get("slurm"):
        parts.append(f"slurm job {(env.get('slurm') or {}).get('job_id')}")
    if env.get("container"):
        parts.append(f"container {(env.get('container') or {}).get('image')}")
    if env.get("host"):
        parts.append(f"host {env.get('host')}")
    return ", ".join(parts)


def check_nightshift(found: Findings, env: dict[str, Any]) -> None:
    """The attested nightshift against this install: with the same source digest the version must be this one."""
    from nightshift.supervisor.attest.provenance import source_digest
    source = (env.get("nightshift_source") or {}).get("sha256")
    mine = nightshift_version()
    if source is None or source != source_digest():
        return  # another nightshift's source: its version is the signer's word, listed at the end
    found.claim("environment.nightshift")
    if env.get("nightshift") == mine:
        found.ok(f"nightshift {mine}: the attested source (sha256 {source[:16]}…) is this install's")
    else:
        found.mismatch(f"claim environment.nightshift = {env.get('nightshift')!r}, but the attested source "
                       f"(sha256 {source[:16]}…) is this install's, which is nightshift {mine}")


def check_uri(found: Findings, statement: dict[str, Any], workspace: Path) -> None:
    from nightshift.supervisor.attest.provenance import repository_uri
    uri = next((s.get("uri") for s in statement.get("subject") or [] if isinstance(s, dict) and s.get("uri")), None)
    if not uri:
        return
    here = repository_uri(workspace) if (workspace / ".git").exists() else None
    if uri and here and uri == here:
        found.claim("subject.uri")
        found.ok(f"subject commit's repository {uri} is this clone's origin")


def list_stated(found: Findings, predicate: dict[str, Any], statement: dict[str, Any]) -> None:
    view = dict(predicate, _subjects=statement.get("subject") or [])
    for name, show in CLAIMS:
        if name in found.checked:
            continue
        try:
            value = show(view)
        except (KeyError, TypeError, AttributeError):
            value = None
        if value:
            found.stated(f"{name}: {value}")
