"""The report's lines about a run's attestations (supervisor/attest): each written envelope, read from the run
directory alone (``attestations/verdict-<N>.dsse.json``): its verdict, commit, signer's key fingerprint (or that
it is unsigned), the envelope's digest and file, and the command that checks it.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any


def attestations(run_dir: Path) -> list[dict[str, Any]]:
    """One record per envelope file, newest verdict last; an unreadable file is named, not skipped."""
    out = []
    files = sorted((Path(run_dir) / "attestations").glob("verdict-*.dsse.json"),
                   key=lambda p: int(p.name.split("-")[1].split(".")[0]) if p.name.split("-")[1].split(".")[0].isdigit() else 0)
    for path in files:
        try:
            body = path.read_bytes()
            doc = json.loads(body)
            predicate = json.loads(base64.b64decode(doc["payload"]))["predicate"]
        except (OSError, ValueError, KeyError, TypeError):
            out.append({"path": path, "error": "unreadable (not a DSSE envelope of nightshift's)"})
            continue
        signer = predicate.get("signer") or {}
        out.append({"path": path, "sha256": hashlib.sha256(body).hexdigest(),
                    "verdict": (predicate.get("run") or {}).get("verdict"),
                    "passed": (predicate.get("result") or {}).get("passed"), "commit": predicate.get("commit", ""),
                    "fingerprint": signer.get("ssh_fingerprint") if doc.get("signatures") else None})
    return out


def attest_lines(run_dir: Path) -> list[str]:
    lines = []
    for a in attestations(run_dir):
        if a.get("error"):
            lines.append(f"attestation {a['path']}: {a['error']}")
            continue
        signed = f"signed by {a['fingerprint']}" if a["fingerprint"] else "UNSIGNED"
        lines.append(f"attestation of verdict {a['verdict']} ({'PASSED' if a['passed'] else 'FAILED'}) on "
                     f"{str(a['commit'])[:12]}: {signed}; sha256 {a['sha256'][:16]}…; {a['path']}; check it: "
                     f"`nightshift verify-result {a['path']}`")
    return lines


def attest_html(run_dir: Path) -> str:
    found = attestations(run_dir)
    if not found:
        return "<p class=muted id=attestation>No attestation written (one is written at a verified done; " \
               "<code>nightshift attest RUN</code> writes one for any verdict).</p>"
    items = []
    for a in found:
        link = f"<a href='{html.escape(Path(a['path']).resolve().as_uri())}'>{html.escape(str(a['path']))}</a>"
        if a.get("error"):
            items.append(f"<li>{link}: {html.escape(a['error'])}</li>")
            continue
        signed = f"signed by <code>{html.escape(a['fingerprint'])}</code>" if a["fingerprint"] else "<b>unsigned</b>"
        items.append(f"<li>verdict {a['verdict']} ({'passed' if a['passed'] else 'FAILED'}) on commit "
                     f"<code>{html.escape(str(a['commit'])[:12])}</code>, {signed}, sha256 "
                     f"<code>{a['sha256']}</code>: {link}</li>")
    return "<h2>Attestation</h2><ul id=attestation>" + "".join(items) + "</ul>"
