"""The argv every namespace gets, measured where a caller would not see it: the Landlock scope follows bwrap's `--`
for any namespace that shares the machine's network, the seccomp filter's file is written once and then only
stat'ed, and no host socket under a folder that is new inside gets a cover (each is a mount that can fail a start)."""
from __future__ import annotations

import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.fixtures_namespace import need_namespace


def test_every_namespace_that_shares_the_network_runs_its_command_in_the_landlock_scope(tmp_path):
    """The scope is bwrap_argv's (not each caller's: the preflight's agent probe once ran without it): a bare
    namespace with the network, as any caller builds one, cannot reach the machine's abstract socket, which the same
    probe reaches outside (the control)."""
    need_namespace()
    from nightshift.supervisor.sandbox import landlock
    from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

    if landlock.abi() < landlock.SCOPED_ABI:
        pytest.skip("this kernel has no Landlock scope (Linux 6.12+): the landlock door is open here")
    name = f"ns37-any-{uuid.uuid4().hex[:8]}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\0" + name)
    listener.listen(4)
    probe = ["python3", "-c", "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0' + %r)\n"
             "    print('reached')\nexcept OSError:\n    print('refused')\n" % name]
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    tmp.mkdir()
    try:
        outside = subprocess.run(probe, capture_output=True, text=True, timeout=60)
        inside = subprocess.run(bwrap_argv(Namespace(workspace=ws, tmp=tmp, network=True)) + probe,
                                capture_output=True, text=True, timeout=60)
    finally:
        listener.close()
    assert outside.stdout.strip() == "reached", outside.stderr
    assert inside.stdout.strip() == "refused", (inside.stdout, inside.stderr)


def test_the_filter_file_costs_a_namespace_one_stat_and_the_nested_filter_allows_only_mounts_and_namespaces(
        tmp_path, monkeypatch):
    """Every namespace asks for the filter's file: it is written once per state folder and then neither re-read nor
    its folder re-made (its name is its content's hash). The nested filter lets through exactly the mount family and
    unshare/setns."""
    from nightshift.supervisor.sandbox import seccomp

    if seccomp.seccomp_problem() is not None:
        pytest.skip(seccomp.seccomp_problem())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    first = seccomp.program_file()
    assert first is not None and first.read_bytes() == seccomp._compiled()[0]

    def refused(*args, **kwargs):
        raise AssertionError("the filter's file was read or its folder made again")

    monkeypatch.setattr(Path, "read_bytes", refused)
    monkeypatch.setattr(seccomp, "make_private_dir", refused)
    assert seccomp.program_file() == first
    assert set(seccomp.REFUSED) - set(seccomp.NESTED_ALLOWED) == {
        "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key", "bpf",
        "userfaultfd", "perf_event_open"}
    assert set(seccomp.NESTED_ALLOWED) < set(seccomp.REFUSED)


def test_no_cover_for_a_host_socket_under_a_folder_that_is_new_inside(tmp_path):
    """Each cover is a mount that fails the start if its socket went away meanwhile: none for sockets under the
    private /dev (or /run/user's tmpfs), where the host's are not there anyway; one named in [policy] sockets is
    bound in."""
    need_namespace()
    if os.getuid() != 0:
        pytest.skip("a socket in /dev needs root (CI runs as root)")
    from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

    path = Path(f"/dev/ns37-{uuid.uuid4().hex[:8]}.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(1)
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    tmp.mkdir()
    try:
        plain = bwrap_argv(Namespace(workspace=ws, tmp=tmp))
        named = bwrap_argv(Namespace(workspace=ws, tmp=tmp, sockets=(path,)))
        reach = ["python3", "-c", f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('in')"]
        done = subprocess.run(named + reach, capture_output=True, text=True, timeout=60)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
    assert str(path) not in plain, plain
    assert done.stdout.strip() == "in", done.stderr
