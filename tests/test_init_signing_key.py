"""init offers a signing key when there is none (attestations would be unsigned): at a terminal it asks (default
yes); `--new-key` makes it unattended; `--yes` alone makes nothing outside the workspace and says how. Only the
public half is ever printed; an existing key is never replaced, and with one there is no offer at all."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.fixtures_attest import private_env


def init(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "init", str(folder), "--yes",
                           "--goal", "g", *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **env})


def test_yes_alone_makes_no_key_and_says_so_new_key_makes_one_and_prints_only_its_public_half(tmp_path):
    env = private_env(tmp_path / "who")
    key = tmp_path / "who" / "config" / "nightshift" / "attest_ed25519"
    plain = init(tmp_path / "a", env)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "no signing key here" in plain.stdout and "`nightshift attest --new-key` makes one" in plain.stdout
    assert not key.exists()
    made = init(tmp_path / "b", env, "--new-key")
    assert made.returncode == 0, made.stdout + made.stderr
    assert key.is_file() and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert f"made an ed25519 signing key: {key}" in made.stdout and "SHA256:" in made.stdout
    secret = key.read_text()
    body = "".join(secret.splitlines()[1:-1])
    assert body and body not in made.stdout + made.stderr and body[:40] not in made.stdout + made.stderr
    again = init(tmp_path / "c", env, "--new-key")  # a key is there: no offer, no note, nothing replaced
    assert again.returncode == 0 and "signing key" not in again.stdout, again.stdout
    assert key.read_text() == secret


def test_at_a_terminal_the_offer_is_a_question_whose_default_is_yes(tmp_path, monkeypatch):
    from nightshift.supervisor.cli.init.signing_key import offer_signing_key
    env = private_env(tmp_path / "who")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    key = Path(env["XDG_CONFIG_HOME"]) / "nightshift" / "attest_ed25519"
    said: list[str] = []
    asked: list[str] = []
    offer_signing_key(False, True, lambda q: asked.append(q) or "n", said.append)
    assert len(asked) == 1 and "[Y/n]" in asked[0] and not key.exists()
    assert said and said[-1].startswith("note: no signing key here")
    offer_signing_key(False, True, lambda q: asked.append(q) or "", said.append)  # Enter: yes
    assert key.is_file() and said[-1].startswith("made an ed25519 signing key")
    offer_signing_key(False, True, lambda q: asked.append(q) or "", said.append)  # there now: not asked again
    assert len(asked) == 2
