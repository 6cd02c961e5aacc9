"""Which key signs an attestation, and the public keys that check one.

The signing key, first found: ``[attest] key`` (a path; "none": unsigned on purpose), else the key nightshift made
on request (`nightshift attest --new-key`, in the user's config folder), else ``~/.ssh/id_ed25519``; none of them:
unsigned, and the attestation says so. Keys are ed25519, in OpenSSH or PKCS#8 PEM form (pyca/cryptography reads
them). A key with a passphrase is used through ssh-agent (paramiko speaks its protocol) when an agent holds it;
nightshift never asks for or stores a passphrase.
"""
from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from securesystemslib.signer import CryptoSigner, Signature, Signer, SSlibKey

from nightshift.supervisor.errors import UserError

NEW_KEY_HINT = "`nightshift attest --new-key` makes one without a passphrase"


class KeyProblem(UserError):
    """A key that cannot sign or check: names the file and the fix."""


def own_key_path() -> Path:
    """The key `nightshift attest --new-key` makes: the user's, beside their other config, never in a workspace."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "nightshift" / "attest_ed25519"


def default_ssh_key() -> Path:
    return Path.home() / ".ssh" / "id_ed25519"


def chosen_key(setting: str, label: str = "[attest] key") -> Path | None:
    """The private key file that signs (None: unsigned). ``setting``: ``[attest] key`` (or --key, ``label``)."""
    if setting.strip().lower() == "none":
        return None
    if setting:
        path = Path(setting).expanduser()
        if not path.is_file():
            raise KeyProblem(f"{label} = {setting!r}: no such file; fix the path, or {NEW_KEY_HINT} ([attest] "
                             "key = \"none\" attests unsigned)")
        return path
    for path in (own_key_path(), default_ssh_key()):
        if path.is_file():
            return path
    return None


def ssh_public_line(public) -> str:
    from cryptography.hazmat.primitives import serialization
    return public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def fingerprint(public) -> str:
    """The key's SSH fingerprint, as `ssh-keygen -lf` prints it: SHA256:<base64 of the key blob's digest>."""
    blob = base64.b64decode(ssh_public_line(public).split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _ed25519(key, path: Path):
    from cryptography.hazmat.primitives.asymmetric import ed25519
    if not isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)):
        raise KeyProblem(f"{path} is not an ed25519 key; nightshift signs with ed25519: `ssh-keygen -t ed25519 -f "
                        f"FILE` and set [attest] key = FILE, or {NEW_KEY_HINT}")
    return key


def load_public(path: Path):
    """An ed25519 public key from an OpenSSH .pub line, a PEM file, or the private key file itself."""
    from cryptography.hazmat.primitives import serialization
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise KeyProblem(f"cannot read the key {path} ({exc.strerror}); give the signer's public key file") from None
    try:
        if data.lstrip().startswith(b"ssh-"):
            return _ed25519(serialization.load_ssh_public_key(data.strip().split(b"\n")[0]), path)
        if b"PUBLIC KEY" in data:
            return _ed25519(serialization.load_pem_public_key(data), path)
        return _ed25519(_load_private(data, path).public_key(), path)
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise KeyProblem(f"{path} is not a public key nightshift can read ({exc}); give the signer's ed25519 "
                        "public key (an OpenSSH .pub line or a PEM file)") from None


def _load_private(data: bytes, path: Path):
    from cryptography.hazmat.primitives import serialization
    if b"OPENSSH PRIVATE KEY" in data:
        return serialization.load_ssh_private_key(data, password=None)
    return serialization.load_pem_private_key(data, password=None)


class AgentSigner(Signer):
    """Signs DSSE's pre-authentication encoding with a key held by ssh-agent: for ed25519 the agent's signature is
    the plain ed25519 signature of the bytes it is given, so any DSSE verifier with the public key checks it."""

    def __init__(self, agent_key, public_key: SSlibKey):
        self._agent_key, self._public_key = agent_key, public_key

    @property
    def public_key(self) -> SSlibKey:
        return self._public_key

    @classmethod
    def from_priv_key_uri(cls, priv_key_uri, public_key, secrets_handler=None):  # pragma: no cover - not by URI
        raise NotImplementedError("an ssh-agent key is found by its public key, not by a URI")

    def sign(self, payload: bytes) -> Signature:
        from paramiko.message import Message
        blob = Message(self._agent_key.sign_ssh_data(payload))
        if blob.get_text() != "ssh-ed25519":
            raise KeyProblem("ssh-agent answered with a signature that is not ed25519")
        return Signature(self._public_key.keyid, blob.get_binary().hex())


def _agent_signer(path: Path, public) -> AgentSigner | None:
    """The agent's key matching ``public`` (None: no agent runs, or it does not hold this key)."""
    if not os.environ.get("SSH_AUTH_SOCK"):
        return None
    try:
        from paramiko.agent import Agent
        agent = Agent()
        keys = agent.get_keys()
    except Exception:  # noqa: BLE001 - an agent that does not answer is an agent that does not hold the key
        return None
    want = base64.b64decode(ssh_public_line(public).split()[1])
    for key in keys:
        if key.asbytes() == want:
            return AgentSigner(key, SSlibKey.from_crypto(public))
    return None


@dataclass
class SigningKey:
    signer: Signer
    public: object  # cryptography's Ed25519PublicKey
    path: Path
    via_agent: bool

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def describe(self) -> dict:
        return {"keyid": self.signer.public_key.keyid, "ssh_fingerprint": self.fingerprint,
                "public_key": ssh_public_line(self.public), "via": "ssh-agent" if self.via_agent else "key file"}


def signing_key(path: Path) -> SigningKey:
    """Load ``path`` to sign; a key with a passphrase through ssh-agent. One-line errors name the fix."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyProblem(f"cannot read the signing key {path} ({exc.strerror}); fix [attest] key, or "
                        f"{NEW_KEY_HINT}") from None
    try:
        private = _ed25519(_load_private(data, path), path)
        return SigningKey(CryptoSigner(private), private.public_key(), path, False)
    except TypeError:  # encrypted: a passphrase is needed, which only the agent may use for us
        pub = path.with_name(path.name + ".pub")
        if not pub.is_file():
            raise KeyProblem(f"{path} has a passphrase and {pub} (its public key, to find it in ssh-agent) is "
                            f"missing; put it back, or {NEW_KEY_HINT}") from None
        public = load_public(pub)
        signer = _agent_signer(path, public)
        if signer is None:
            raise KeyProblem(f"{path} has a passphrase and no ssh-agent holds it: `eval $(ssh-agent) && ssh-add "
                            f"{path}` before the run (SSH_AUTH_SOCK set), or {NEW_KEY_HINT}") from None
        return SigningKey(signer, public, path, True)
    except ValueError as exc:
        raise KeyProblem(f"{path} is not a private key nightshift can read ({exc}); fix [attest] key, or "
                        f"{NEW_KEY_HINT}") from None


def new_key(path: Path | None = None) -> tuple[Path, str]:
    """Make an ed25519 key pair (OpenSSH form, no passphrase: a detached supervisor signs with it) at ``path``
    (default: nightshift's own). Never over an existing file. Returns (private key path, fingerprint)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    path = Path(path) if path else own_key_path()
    pub = path.with_name(path.name + ".pub")
    for existing in (path, pub):
        if existing.exists() or existing.is_symlink():
            raise KeyProblem(f"{existing} already exists; nothing was written over (remove it first to make "
                            "a new key, or keep using it)")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    private = ed25519.Ed25519PrivateKey.generate()
    body = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                 serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(body)
    fd = os.open(pub, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w") as fh:
        fh.write(ssh_public_line(private.public_key()) + " nightshift-attest\n")
    return path, fingerprint(private.public_key())
