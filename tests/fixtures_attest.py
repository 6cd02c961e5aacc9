"""Fixtures for attestations: a demo run that ended verified done, signed with a key nightshift made
(`nightshift attest --new-key`), in a private HOME / XDG_CONFIG_HOME so no key of the machine's user is read or
made; copies of its workspace to tamper with; and a DSSE check written from the specification alone (the PAE and a
plain ed25519 verification with pyca/cryptography), which shares no code with nightshift's securesystemslib path.
"""
from __future__ import annotations

import base64
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures_core import nightshift, require_tool


def private_env(root: Path) -> dict[str, str]:
    env = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "config"), "XDG_STATE_HOME": str(root / "state"),
           "SSH_AUTH_SOCK": ""}
    for value in env.values():
        if value:
            Path(value).mkdir(parents=True, exist_ok=True)
    return env


@dataclass
class DemoRun:
    ws: Path
    run_dir: Path
    env: dict[str, str]
    pub: Path

    @property
    def attestation(self) -> Path:
        return self.run_dir / "attestations" / "verdict-2.dsse.json"

    def ns(self, *args: str, cwd: Path | None = None, **kw):
        return nightshift(*args, cwd=cwd or self.ws, env={**self.env, **kw.pop("env", {})}, **kw)

    def copy(self, dest: Path) -> "DemoRun":
        shutil.copytree(self.ws, dest / "ws", symlinks=True)
        ws = dest / "ws"
        return DemoRun(ws, ws / ".nightshift" / "runs" / self.run_dir.name, self.env, self.pub)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> DemoRun:
    require_tool("tmux")
    root = tmp_path_factory.mktemp("attest-demo")
    env = private_env(root)
    made = nightshift("attest", "--new-key", env=env)
    assert made.returncode == 0, made.stderr
    out = nightshift("demo", "--headless", "--dir", str(root / "demo"), env=env, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    ws = root / "demo"
    run_dir = next((ws / ".nightshift" / "runs").iterdir())
    return DemoRun(ws, run_dir, env, root / "config" / "nightshift" / "attest_ed25519.pub")


def read_envelope(path: Path) -> dict:
    return json.loads(path.read_text())


def statement_of(envelope: dict) -> dict:
    return json.loads(base64.b64decode(envelope["payload"]))


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding, as its specification writes it."""
    kind = payload_type.encode()
    return b"DSSEv1 " + str(len(kind)).encode() + b" " + kind + b" " + str(len(body)).encode() + b" " + body


def independent_verify(envelope: dict, public_key_line: str) -> bool:
    """DSSE verification by the specification with pyca/cryptography only (no securesystemslib, no nightshift)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.serialization import load_ssh_public_key
    key = load_ssh_public_key(public_key_line.encode())
    body = base64.b64decode(envelope["payload"])
    for signature in envelope.get("signatures", []):
        try:
            key.verify(base64.b64decode(signature["sig"]), pae(envelope["payloadType"], body))
            return True
        except InvalidSignature:
            continue
    return False


def reseal_unsigned(envelope: dict, statement: dict) -> dict:
    """A forged envelope: another statement, no signature (what an agent could write without the key)."""
    body = json.dumps(statement).encode()
    return {"payload": base64.b64encode(body).decode(), "payloadType": envelope["payloadType"], "signatures": []}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def resign(envelope: dict, statement: dict, private_key: Path, keyid: str | None = "forger") -> dict:
    """A forged envelope re-signed with a real key (the trusted one, when the forger holds it): the statement as
    given, a DSSE signature over its PAE made with pyca/cryptography from the OpenSSH private key file."""
    from cryptography.hazmat.primitives.serialization import load_ssh_private_key
    key = load_ssh_private_key(Path(private_key).read_bytes(), password=None)
    body = json.dumps(statement).encode()
    sig = {"sig": b64(key.sign(pae(envelope["payloadType"], body)))}
    if keyid is not None:
        sig["keyid"] = keyid
    return {"payload": b64(body), "payloadType": envelope["payloadType"], "signatures": [sig]}


def write_note(ws: Path, commit: str, envelopes: list[dict]) -> None:
    """Replace the commit's nightshift note with these envelopes, a JSON line each (as a forger with git would)."""
    import subprocess
    note = ws / ".forged-note"
    note.write_text("".join(json.dumps(e) + "\n" for e in envelopes))
    subprocess.run(["git", "-c", "user.name=f", "-c", "user.email=f@f", "notes", "--ref=refs/notes/nightshift",
                    "add", "-f", "-F", str(note), commit], cwd=ws, check=True, capture_output=True)
    note.unlink()


def fresh_clone(ws: Path, dest: Path) -> Path:
    """What a referee has: a clone on another path with only the notes fetched (no run folder, no outputs)."""
    import subprocess
    subprocess.run(["git", "clone", "-q", str(ws), str(dest)], check=True)
    subprocess.run(["git", "fetch", "-q", "origin", "refs/notes/nightshift:refs/notes/nightshift"], cwd=dest,
                   check=True)
    return dest


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory) -> DemoRun:
    """The README's own path: the user's code committed, then nightshift.toml, CLAUDE.md and the reference written
    (as `nightshift init` and the user's edits leave them: never committed), then `nightshift run` (the demo agent,
    in the foreground); an untracked file of the user's beside them."""
    import subprocess
    import sys
    root = tmp_path_factory.mktemp("attest-readme")
    env = private_env(root)
    assert nightshift("attest", "--new-key", env=env).returncode == 0
    ws = root / "ws"
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from nightshift.supervisor.cli.demo import "
                    "build_workspace; build_workspace(Path(sys.argv[1]))", str(ws)], check=True, env={
                        **__import__("os").environ, **env})
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@u"]
    subprocess.run([*git, "rm", "-r", "-q", "--cached", "nightshift.toml", "CLAUDE.md", "reference"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "the user's code"], cwd=ws, check=True)
    (ws / "scratch.txt").write_text("the user's own notes, never nightshift's to commit\n")
    out = nightshift("run", "--foreground", "--backend", "local", str(ws), env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    run_dir = next((ws / ".nightshift" / "runs").iterdir())
    return DemoRun(ws, run_dir, env, root / "config" / "nightshift" / "attest_ed25519.pub")
