"""The wait loop's cached folder listings (supervisor/run/listing.py) say exactly what a fresh listing says: an entry
made in the same clock tick as the last listing, in a quiet folder, or removed, is seen at the next call. And the
tmux server's cached identity never outlives its server: a new server on the same socket is told apart."""
from __future__ import annotations

import os
import subprocess
import time

from nightshift.supervisor.run import listing
from nightshift.supervisor.run.inbox import send_command, take_commands
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import require_tool


def age(folder, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(folder, (then, then))


def test_an_entry_made_in_the_same_tick_as_a_listing_is_seen(tmp_path):
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "a.json").write_text("{}")
    assert listing.names(folder) == ("a.json",)
    listed_at = folder.stat().st_mtime_ns
    (folder / "b.json").write_text("{}")
    os.utime(folder, ns=(folder.stat().st_atime_ns, listed_at))  # as a coarse clock leaves it: mtime unmoved
    assert listing.names(folder) == ("a.json", "b.json")


def test_a_quiet_folder_is_reused_and_still_sees_what_comes_and_goes(tmp_path):
    folder = tmp_path / "refusals"
    folder.mkdir()
    (folder / "1.seen").write_text("{}")
    age(folder, 60)  # quiet for a minute: its listing is kept
    assert listing.names(folder) == ("1.seen",)
    assert listing.names(folder) == ("1.seen",)
    (folder / "2.json").write_text("{}")
    (folder / ".3.json.tmp").write_text("{}")  # being written: hidden, as glob hides it
    assert [p.name for p in listing.matching(folder, ".json")] == ["2.json"]
    age(folder, 60)
    assert listing.names(folder) == (".3.json.tmp", "1.seen", "2.json")
    (folder / "2.json").unlink()
    assert listing.names(folder) == (".3.json.tmp", "1.seen")
    folder.joinpath(".3.json.tmp").unlink()
    folder.joinpath("1.seen").unlink()
    folder.rmdir()
    assert listing.names(folder) == ()


def test_commands_sent_to_a_quiet_inbox_are_taken(tmp_path):
    run = RunPaths(tmp_path / "ws" / ".nightshift" / "runs" / "r1").create()
    age(run.inbox, 60)
    assert take_commands(run) == []
    send_command(run, "pause")
    assert [c["verb"] for c in take_commands(run)] == ["pause"]


def test_a_new_tmux_server_on_the_same_socket_is_not_the_cached_one(tmp_path):
    require_tool("tmux")
    from nightshift.supervisor.backends.tmux import TmuxBackend

    socket = f"ns-listing-{os.getpid()}"
    try:
        subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "x", "sleep 600"], check=True)
        backend = TmuxBackend(socket, "r1")
        first = backend.server_identity()
        assert first and backend.server_identity() == first
        target = {"socket": socket, "server": first, "pane": "%0", "host": os.uname().nodename}
        assert backend.owns(target)
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=True)
        pid = int(first.split(":")[0])
        deadline = time.monotonic() + 30
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)
        subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "x", "sleep 600"], check=True)
        assert backend.server_identity() not in (None, first)
        assert not backend.owns(target)  # the old pane id %0 now names a pane of another server
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def test_the_stop_channel_sees_a_new_request_in_a_quiet_folder_and_its_answer(tmp_path):
    from nightshift.supervisor.shift import stop_channel

    stops = tmp_path / "stops"
    stops.mkdir()
    for i in range(50):  # what a long run leaves: answered requests
        (stops / f"{i:04d}.req.json").write_text('{"id": "%04d"}' % i)
        (stops / f"{i:04d}.ans.json").write_text('{"decision": "allow"}')
    age(stops, 60)
    assert stop_channel.pending(stops) == [] and stop_channel.pending(stops) == []
    (stops / "new.req.json").write_text('{"id": "new", "token": "t"}')
    assert [r["id"] for r in stop_channel.pending(stops)] == ["new"]
    age(stops, 60)
    assert [r["id"] for r in stop_channel.pending(stops)] == ["new"]  # still unanswered: still pending
    stop_channel.answer(stops, "new", "allow")
    assert stop_channel.pending(stops) == []
