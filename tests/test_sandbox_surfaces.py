"""Issue 37: every surface of the sandbox probed from inside the namespace a run makes, as root (here) with a home that
holds what an agent would steal or use: an ssh key, cloud and netrc credentials, a tmux server and an agent socket in
$HOME, one in /run/user, the socket variables set, a terminal of the user's open, a file planted in /dev/shm. Each
probe first runs outside as the control (the door is open there), then inside (closed)."""
from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.fixtures_core import require_tool, wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace


@pytest.fixture
def stranger_home(monkeypatch):
    """A $HOME full of doors, the socket variables naming them, and a pty of the user's open. Outside /tmp (the
    host's /tmp is private inside anyway: a home there would prove nothing)."""
    require_tool("tmux")
    home = Path("/var/tmp") / f"ns37-home-{uuid.uuid4().hex[:8]}"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = x\n")
    (home / ".netrc").write_text("machine example.org login me password hunter2\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("oauth_token: gho_x\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    tmux_sock = home / "tmux.sock"
    subprocess.run(["tmux", "-S", str(tmux_sock), "new-session", "-d", "sleep 300"], check=True)
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(home / "agent.sock"))
    agent.listen(8)
    run_user = Path("/run/user") / str(os.getuid())
    run_user.mkdir(parents=True, exist_ok=True)
    bus_path = run_user / f"bus-{uuid.uuid4().hex[:8]}"
    bus = socket.socket(socket.AF_UNIX)
    bus.bind(str(bus_path))
    bus.listen(8)
    abstract = socket.socket(socket.AF_UNIX)  # an abstract socket (X11, dbus and others use them): no path to cover
    abstract.bind(f"\0ns37-{uuid.uuid4().hex[:8]}")
    abstract.listen(8)
    monkeypatch.setenv("TMUX", f"{tmux_sock},1,0")
    monkeypatch.setenv("TMUX_PANE", "%0")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(home / "agent.sock"))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={bus_path}")
    master, slave = os.openpty()
    yield home
    for fd in (master, slave):
        os.close(fd)
    agent.close()
    abstract.close()
    bus.close()
    bus_path.unlink(missing_ok=True)
    subprocess.run(["tmux", "-S", str(tmux_sock), "kill-server"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)


def _boundary(ws: Path):
    from nightshift.supervisor.config.schema import load_config
    from nightshift.supervisor.sandbox.boundary import boundary_for

    return boundary_for(ws, load_config(ws))


def test_every_surface_is_open_outside_and_closed_inside_as_root(workspace, stranger_home):  # noqa: F811
    need_namespace()
    from nightshift.supervisor.sandbox.surfaces import run
    from nightshift.supervisor.sandbox.survey import plan, survey

    boundary = _boundary(workspace.path)
    todo = plan(boundary, session=False)
    assert len(todo["sockets"]) >= 3 and len(todo["credentials"]) >= 4 and todo["ptys"]
    control = {s["surface"]: s for s in run(todo)}  # the same probes, unsandboxed: the doors are there
    (Path("/dev/shm") / todo["marker"]).unlink(missing_ok=True)
    for name in ("capabilities", "mounts", "unix sockets", "abstract sockets", "socket environment",
                 "terminals and /dev", "/dev/shm", "syscalls", "credentials"):
        assert not control[name]["closed"], (name, control[name])
    inside = {s.name: s for s in survey(boundary)}
    assert set(inside) >= set(control) | {"session"}
    for name, surface in inside.items():
        assert surface.closed, surface.line()
    assert "a socket in the private /tmp works" in inside["unix sockets"].detail
    # a turn in its pane, with the agent's network on (init defaults): abstract sockets through the Landlock scope
    assert boundary.network
    interactive = {s.name: s for s in survey(boundary, interactive=True)}
    for name, surface in interactive.items():
        assert surface.closed, surface.line()


def test_the_interactive_survey_measures_the_turns_own_namespace(workspace):  # noqa: F811
    """The turn's line comes from turn_namespace, not a command's namespace with the network switched: with
    [policy] claude_sandbox the turn lets Claude Code's bubblewrap make user namespaces (the survey says so), while
    TIOCSTI and the mounts stay refused; a command's namespace never allows it."""
    need_namespace()
    from nightshift.supervisor.sandbox.survey import survey

    boundary = _boundary(workspace.path)
    nested = {s.name: s for s in survey(boundary, interactive=True, nested=True)}
    assert not nested["syscalls"].closed and "unshare(CLONE_NEWUSER)" in nested["syscalls"].detail, nested
    assert nested["TIOCSTI"].closed and nested["mounts"].closed, nested
    assert survey(boundary, interactive=True)[0].closed  # capabilities: the plain turn's user namespace
    command = {s.name: s for s in survey(boundary)}
    assert command["syscalls"].closed, command["syscalls"].line()


def test_a_named_socket_is_reachable_and_the_rest_are_not(workspace, stranger_home):  # noqa: F811
    """[policy] sockets opens one socket by name (as munge's for a Slurm run); the others stay covered."""
    need_namespace()
    from nightshift.supervisor.sandbox.command import command_namespace

    toml = workspace.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[policy]", f'[policy]\nsockets = ["{stranger_home / "agent.sock"}"]')
                    if "[policy]" in toml.read_text() else
                    toml.read_text() + f'\n[policy]\nsockets = ["{stranger_home / "agent.sock"}"]\n')
    boundary = _boundary(workspace.path)
    assert stranger_home / "agent.sock" in boundary.sockets
    probe = ("import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n"
             "        s.connect(p); print('reached', p)\n    except OSError as e:\n        print('refused', p)\n")
    command = f"python3 -c {_q(probe)} {stranger_home / 'agent.sock'} {stranger_home / 'tmux.sock'}"
    with command_namespace(boundary, "test", command) as ns:
        done = subprocess.run(ns.argv, capture_output=True, text=True, timeout=60)
    assert f"reached {stranger_home / 'agent.sock'}" in done.stdout, done
    assert f"refused {stranger_home / 'tmux.sock'}" in done.stdout, done


def test_the_runs_tmux_server_cannot_run_a_command_outside(workspace, stranger_home):  # noqa: F811
    """The issue's escape: `tmux run-shell` through the server named by $TMUX, writing a file outside."""
    need_namespace()
    from nightshift.supervisor.sandbox.command import command_namespace

    witness = stranger_home / "escaped"
    sock = stranger_home / "tmux.sock"
    command = (f"tmux -S {sock} run-shell 'touch {witness}'; "
               f'tmux -S "${{TMUX%%,*}}" run-shell "touch {witness}"; true')
    with command_namespace(_boundary(workspace.path), "test", command) as ns:
        subprocess.run(ns.argv, capture_output=True, text=True, timeout=60)
    assert not witness.exists()
    subprocess.run(["tmux", "-S", str(sock), "run-shell", f"touch {witness}"], check=True, timeout=30)
    wait_for(witness.exists, timeout=30, what="the control: the same command outside reaches the server")


def _q(text: str) -> str:
    import shlex
    return shlex.quote(text)


def test_claude_codes_own_sandbox_nests_and_hidden_data_stays_hidden(tmp_path):
    """[policy] claude_sandbox: the turn lets Claude Code's bubblewrap make its namespaces inside; an agent that
    makes its own user and mount namespace there still cannot unmount what hides a held-out folder, nor write /."""
    need_namespace()
    from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

    held = Path("/var/tmp") / f"ns37-nested-{uuid.uuid4().hex[:8]}"
    held.mkdir()
    (held / "answers.dat").write_text("SECRET-ANSWERS")
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    tmp.mkdir()
    try:
        argv = bwrap_argv(Namespace(workspace=ws, tmp=tmp, hidden=[held], nested=True))
        inner = ("bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true && echo nested-ok; "
                 f"unshare -U -r -m sh -c 'echo in-own-namespace; umount -l {held}; cat {held}/answers.dat; "
                 "touch /usr/ns37-escaped'")
        done = subprocess.run(argv + ["bash", "-c", inner], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(held, ignore_errors=True)
    assert "nested-ok" in done.stdout and "in-own-namespace" in done.stdout, done.stderr  # the attempt ran
    assert "SECRET-ANSWERS" not in done.stdout and not Path("/usr/ns37-escaped").exists()


def test_a_command_with_the_machines_network_cannot_reach_its_abstract_sockets(workspace):  # noqa: F811
    """[policy] command_network = true shares the machine's network namespace: the Landlock scope holds the
    machine's abstract sockets out of reach, while the command's own abstract socket works."""
    need_namespace()
    from nightshift.supervisor.sandbox.command import command_namespace

    name = f"ns37-cmd-{uuid.uuid4().hex[:8]}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\0" + name)
    listener.listen(4)
    toml = workspace.path / "nightshift.toml"
    text = toml.read_text()
    toml.write_text(text.replace("[policy]", "[policy]\ncommand_network = true") if "[policy]" in text
                    else text + "\n[policy]\ncommand_network = true\n")
    probe = ("import socket, uuid\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0' + %r)\n"
             "    print('reached')\nexcept OSError:\n    print('refused')\nown = socket.socket(socket.AF_UNIX)\n"
             "own.bind('\\0own-' + uuid.uuid4().hex)\nown.listen(1)\nc = socket.socket(socket.AF_UNIX)\n"
             "c.connect(own.getsockname())\nprint('own ok')\n") % name
    boundary = _boundary(workspace.path)
    assert boundary.command_network
    try:
        with command_namespace(boundary, "test", f"python3 -c {_q(probe)}") as ns:
            done = subprocess.run(ns.argv, capture_output=True, text=True, timeout=60)
    finally:
        listener.close()
    assert "refused" in done.stdout and "own ok" in done.stdout, (done.stdout, done.stderr)


def test_gpu_device_nodes_are_bound_into_the_private_dev(tmp_path):
    """No GPU on the test machine: a stand-in device node named like NVIDIA's (a null device, made for the test)
    shows the private /dev takes what matches /dev/nvidia* and nothing else of the host's."""
    need_namespace()
    if os.getuid() != 0:
        pytest.skip("making a device node needs root (CI runs as root)")
    from nightshift.supervisor.sandbox.mounts import Namespace, bwrap_argv

    node = Path(f"/dev/nvidia-ns37-{uuid.uuid4().hex[:6]}")
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    tmp.mkdir()
    try:
        argv = bwrap_argv(Namespace(workspace=ws, tmp=tmp))
        done = subprocess.run(argv + ["bash", "-c", f"echo x > {node} && echo gpu-ok; ls /dev"], capture_output=True,
                              text=True, timeout=60)
    finally:
        node.unlink()
    assert "gpu-ok" in done.stdout, done.stderr
    assert not any(name.startswith(("sd", "nvme", "vd", "mem", "port")) for name in done.stdout.split()), done.stdout
