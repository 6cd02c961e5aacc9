"""DSSE envelopes (securesystemslib, DSSE's reference implementation): the Statement as the payload, typed
``application/vnd.in-toto+json``, and the key's own signature over DSSE's pre-authentication encoding, nothing
else wrapped around it, so any DSSE verifier holding the public key checks it.
"""
from __future__ import annotations

import json
from typing import Any

from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from supervisor.errors import UserError

PAYLOAD_TYPE = "application/vnd.in-toto+json"


class EnvelopeProblem(UserError):
    """An envelope that is not one: names the file and what is wrong."""


def seal(statement: dict[str, Any], key) -> dict[str, Any]:
    """The DSSE envelope of ``statement`` (a dict), signed by ``key`` (keys.SigningKey) or unsigned (None)."""
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    if key is not None:
        envelope.sign(key.signer)
    return envelope.to_dict()


def open_envelope(doc: Any, source: str) -> tuple[Envelope, dict[str, Any]]:
    """(the envelope, its Statement) from a parsed JSON document; a one-line error when it is not a DSSE envelope
    holding an in-toto Statement."""
    try:
        envelope = Envelope.from_dict(json.loads(json.dumps(doc)))  # from_dict rewrites the dict it is given
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, it is not an envelope
        raise EnvelopeProblem(f"{source} is not a DSSE envelope ({type(exc).__name__}: {exc}); give the "
                              ".dsse.json file `nightshift attest` wrote, or a commit with a nightshift note") from None
    if envelope.payload_type != PAYLOAD_TYPE:
        raise EnvelopeProblem(f"{source}: payloadType is {envelope.payload_type!r}, not {PAYLOAD_TYPE!r}: not an "
                              "in-toto attestation")
    try:
        statement = json.loads(envelope.payload)
    except ValueError:
        raise EnvelopeProblem(f"{source}: the payload is not JSON (the envelope was changed)") from None
    if not isinstance(statement, dict):
        raise EnvelopeProblem(f"{source}: the payload is not an in-toto Statement")
    return envelope, statement


def verifying_key(public) -> SSlibKey:
    return SSlibKey.from_crypto(public)


def signature_holds(envelope: Envelope, public) -> bool:
    """Whether a signature of ``envelope`` is the key's, over its PAE (securesystemslib's DSSE verify)."""
    try:
        envelope.verify([verifying_key(public)], 1)
        return True
    except Exception:  # noqa: BLE001 - VerificationError, a malformed signature: it does not hold
        return False
