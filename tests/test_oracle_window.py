"""The last sealed oracle command's window (kept.window) lives in the run's private store: written atomically into a
0600 file and read back by the next verdict (or a supervisor started again); without a store nothing is kept."""
from __future__ import annotations

import json
import stat

from nightshift.supervisor.verify.oracle.kept import WINDOW, remember_window, window


def test_the_window_is_kept_privately_in_the_store_and_only_there(tmp_path):
    store = tmp_path / "store"
    store.mkdir(mode=0o700)
    assert window(store) is None
    remember_window(store, 10, 20)
    assert stat.S_IMODE((store / WINDOW).stat().st_mode) == 0o600
    assert window(store) == (10, 20)
    (store / WINDOW).write_text(json.dumps([30, 40]))  # as an earlier version wrote it
    assert window(store) == (30, 40)
    (store / WINDOW).write_text("not json")
    assert window(store) is None
    remember_window(None, 1, 2)
    assert window(None) is None
