"""The one way nightshift writes a private file whole (run/private.py): 0600 whatever the umask, a reader sees the
old file or the new one, and a write that fails leaves neither a half file nor its temporary behind."""
from __future__ import annotations

import json
import os
import stat

import pytest

from nightshift.supervisor.run.private import write_private_bytes, write_private_json


def test_a_private_json_file_is_0600_and_replaces_the_old_one_whole(tmp_path):
    old = os.umask(0)  # the most open umask a user can have: the file is still the user's alone
    try:
        target = tmp_path / "policy.json"
        target.write_text('{"old": true}')
        write_private_json(target, {"new": [1, 2]}, indent=1)
        write_private_bytes(tmp_path / "kept", b"\xff bytes", durable=True)
    finally:
        os.umask(old)
    assert json.loads(target.read_text()) == {"new": [1, 2]}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # the mode of the new file, not the old one's
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "policy.json"]


def test_a_write_that_fails_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "supervisor.json"
    target.write_text('{"pid": 1}')
    with pytest.raises(TypeError):
        write_private_json(target, {"pid": object()})  # not JSON: fails before anything is written
    (tmp_path / "taken" / "inside").mkdir(parents=True)
    with pytest.raises(OSError):
        write_private_bytes(tmp_path / "taken", b"{}")  # the rename fails after the temporary was written
    assert target.read_text() == '{"pid": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["supervisor.json", "taken"]
