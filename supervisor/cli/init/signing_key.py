"""init's offer of a signing key: with no key to sign with, every attestation of the workspace's results is
unsigned (anyone who can write the file, the agent too, could have written it; `verify-result` says UNSIGNED). At a
terminal init asks to make nightshift's own key (default yes); `--new-key` makes it unattended; with `--yes` alone
nothing is made outside the workspace, and a note says how to make one. Only the public half is ever printed.
"""
from __future__ import annotations

from typing import Callable

UNSIGNED_NOTE = ("no signing key here (nightshift's own or ~/.ssh/id_ed25519): this workspace's attestations will be "
                 "unsigned, so `verify-result` can say what they hold but not who made them")


def offer_signing_key(make: bool, asking: bool, ask: Callable[[str], str], say: Callable[[str], None]) -> None:
    """``make``: --new-key; ``asking``: a person at a terminal (not --yes). Never over an existing key."""
    from nightshift.supervisor.attest.keys import KeyProblem, chosen_key, new_key
    try:
        if chosen_key("") is not None:
            return
    except KeyProblem:  # an unreadable default is the attestation's business (it names it); no offer here
        return
    if not make and asking:
        make = ask(f"{UNSIGNED_NOTE}. Make an ed25519 key for nightshift now? [Y/n] ").strip().lower() not in ("n", "no")
    if not make:
        say(f"note: {UNSIGNED_NOTE}; `nightshift attest --new-key` makes one (or `init --new-key`)")
        return
    try:
        path, printed = new_key()
    except (KeyProblem, OSError) as exc:
        say(f"note: no signing key was made ({exc}); `nightshift attest --new-key` tries again")
        return
    say(f"made an ed25519 signing key: {path} (no passphrase, private to you; public: {path}.pub, {printed}); "
        "attestations are signed with it; give the .pub file to whoever checks your results")
