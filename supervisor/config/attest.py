"""The [attest] section of nightshift.toml: how a verified result is signed and kept.

    [attest]
    key = "~/.ssh/id_ed25519"   # the ed25519 key that signs ("" : nightshift's own key if made, else this one;
                                # "none": unsigned on purpose); a passphrase is used through ssh-agent
    note = true                 # also keep the envelope as a git note on the commit (refs/notes/nightshift)
    host = false                # name this machine in the attestation (off: a pushed note is public)
"""
from __future__ import annotations

from nightshift.supervisor.config.types import Section


class AttestConfig(Section):
    key: str = ""
    """The ed25519 key that signs attestations: "" (nightshift's own if made, else ~/.ssh/id_ed25519), a path, or
    "none" (unsigned)."""
    note: bool = True
    """Also keep the envelope as a git note on the commit (refs/notes/nightshift)."""
    host: bool = False
    """Name the signing machine in the attestation (off: a note pushed with the repository would publish it)."""
