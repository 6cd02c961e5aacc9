"""DSSE envelopes: the Statement as the payload, typed ``application/vnd.in-toto+json``, and the key's own signature
over DSSE's pre-authentication encoding (PAE), nothing else wrapped around it, so any DSSE verifier holding the
public key checks it.

Signing goes through securesystemslib (DSSE's reference implementation). Reading and verifying follow the DSSE
specification itself rather than securesystemslib's stricter reading: a signature's ``keyid`` is an optional hint
never used for a security decision (absent, empty or another keyid still verifies against the key given), and
base64 may be standard or URL-safe, padded or not (the spec accepts either encoding on input).
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

from securesystemslib.dsse import Envelope

from nightshift.supervisor.errors import UserError

PAYLOAD_TYPE = "application/vnd.in-toto+json"
B64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")


class EnvelopeProblem(UserError):
    """An envelope that is not one: names the file and what is wrong."""


def seal(statement: dict[str, Any], key) -> dict[str, Any]:
    """The DSSE envelope of ``statement`` (a dict), signed by ``key`` (keys.SigningKey) or unsigned (None)."""
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    if key is not None:
        envelope.sign(key.signer)
    return envelope.to_dict()


def b64decode(text: Any) -> bytes:
    """Standard or URL-safe base64, padded or not (DSSE: "either standard or URL-safe encoding")."""
    if not isinstance(text, str) or not B64.fullmatch(text.strip()):
        raise ValueError("not base64")
    bare = text.strip().rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(bare + "=" * (-len(bare) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not base64 ({exc})") from None


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


@dataclass
class Opened:
    """An envelope as read: its payload's bytes and type, and each signature (keyid hint, raw signature bytes)."""
    payload_type: str
    payload: bytes
    signatures: list[tuple[str, bytes]] = field(default_factory=list)

    def signed_by(self, public) -> bool:
        """Whether any signature is ``public``'s over the PAE, whatever keyid it carries."""
        from cryptography.exceptions import InvalidSignature
        message = pae(self.payload_type, self.payload)
        for _keyid, sig in self.signatures:
            try:
                public.verify(sig, message)
                return True
            except (InvalidSignature, ValueError, TypeError):
                continue
        return False

    def keyids(self) -> list[str]:
        return [k for k, _s in self.signatures if k]


def read_envelope(doc: Any, source: str) -> Opened:
    """The envelope of a parsed JSON document; a one-line error when it is not a DSSE envelope."""
    if not isinstance(doc, dict) or "payload" not in doc or "payloadType" not in doc:
        raise EnvelopeProblem(f"{source} is not a DSSE envelope (it needs payload, payloadType and signatures); give "
                              "the .dsse.json file `nightshift attest` wrote, or a commit with a nightshift note")
    try:
        payload = b64decode(doc["payload"])
        sigs = []
        for sig in doc.get("signatures") or []:
            keyid = sig.get("keyid") if isinstance(sig, dict) else None
            sigs.append((keyid if isinstance(keyid, str) else "", b64decode((sig or {}).get("sig"))))
    except (ValueError, AttributeError) as exc:
        raise EnvelopeProblem(f"{source} is not a DSSE envelope ({exc}); give the .dsse.json file `nightshift "
                              "attest` wrote, or a commit with a nightshift note") from None
    if not isinstance(doc["payloadType"], str):
        raise EnvelopeProblem(f"{source}: payloadType is not a string: not a DSSE envelope")
    return Opened(doc["payloadType"], payload, sigs)


def open_envelope(doc: Any, source: str) -> tuple[Opened, dict[str, Any]]:
    """(the envelope, its Statement); a one-line error when it is not a DSSE envelope holding an in-toto Statement."""
    envelope = read_envelope(doc, source)
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

