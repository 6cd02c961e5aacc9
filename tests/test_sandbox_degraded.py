"""Issue 37 where the machine lacks a part of the sandbox (here: no libseccomp, as on a machine without it: the
binding is made unimportable): `check` names the surface that stays open and why, a run with held-out comparisons
is held unless `[policy] open_doors` accepts the door by name (then check passes and the run starts), and
`verify-result --rerun` refuses likewise."""
from __future__ import annotations

from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace, oracle_block, setup_references

NO_SECCOMP = "raise ImportError('libseccomp is not installed on this machine')\n"


def test_no_seccomp_is_named_and_held_out_runs_need_the_door_accepted(workspace, tmp_path):  # noqa: F811
    need_namespace()
    fake = tmp_path / "fake-site"
    fake.mkdir()
    for name in ("pyseccomp.py", "seccomp.py"):
        (fake / name).write_text(NO_SECCOMP)
    env = {"PYTHONPATH": str(fake)}
    held = setup_references(workspace.path, tmp_path)
    workspace.configure({"s1t1": [["claim", "done", "x"]]}, backend="local", extra=oracle_block(str(held)))
    held_back = nightshift("check", cwd=workspace.path, env=env, timeout=300)
    text = held_back.stdout + held_back.stderr
    assert held_back.returncode != 0 and "Traceback" not in text
    assert "no seccomp filter" in text and 'open_doors = ["seccomp"]' in text, text[-3000:]
    assert "OPEN    mounts" in text or "OPEN    syscalls" in text, text[-3000:]  # the surfaces it leaves open
    doctor = nightshift("doctor", cwd=workspace.path, env=env, timeout=300).stdout
    assert "MISSING  held-out data" in doctor and 'open_doors = ["seccomp"]' in doctor, doctor[-3000:]
    toml = workspace.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[policy]", '[policy]\nopen_doors = ["seccomp"]', 1)
                    if "[policy]" in toml.read_text() else toml.read_text() + '\n[policy]\nopen_doors = ["seccomp"]\n')
    accepted = nightshift("check", cwd=workspace.path, env=env, timeout=300)
    text = accepted.stdout + accepted.stderr
    assert 'open_doors = ["seccomp"]' not in text
    assert text.count("no seccomp filter") == 1, text[-3000:]  # the missing part said once, as a note
    # accepted by name: the surfaces it leaves open are shown, and nothing holds the run (check passes, run starts)
    assert "left open by the missing seccomp part" in text, text[-3000:]
    assert accepted.returncode == 0, text[-3000:]
    started = nightshift("run", str(workspace.path), cwd=workspace.path, env=env, timeout=300)
    runs = sorted((workspace.path / ".nightshift" / "runs").iterdir()) if started.returncode == 0 else []
    for run in runs:
        nightshift("stop", run.name, cwd=workspace.path)
    assert started.returncode == 0 and runs, (started.stdout + started.stderr)[-3000:]
    doctor = nightshift("doctor", cwd=workspace.path, env=env, timeout=300).stdout
    assert "MISSING  held-out data" not in doctor and "MISSING  sandbox" not in doctor, doctor[-3000:]
    rerun = nightshift("verify-result", "HEAD", "--rerun", cwd=workspace.path, env=env)
    assert rerun.returncode == 2 and "--accept-open seccomp" in rerun.stderr and "Traceback" not in rerun.stderr


def test_a_kernel_without_the_landlock_scope_is_a_door_only_where_the_network_is_shared(tmp_path, monkeypatch):
    """Kernels before 6.12 (RHEL 8/9) have no Landlock ABI 6: with the agent's network on, the machine's abstract
    sockets stay reachable; a held-out run names that door and starts once [policy] open_doors accepts it."""
    need_namespace()
    from dataclasses import replace

    from nightshift.supervisor.config.policy import PolicyConfig
    from nightshift.supervisor.sandbox import landlock, probe
    from nightshift.supervisor.sandbox.boundary import Boundary, start_problems, surface_door

    monkeypatch.setattr(landlock, "abi", lambda: 5)  # Landlock as Linux 6.7-6.11 has it: no scope
    probe.hardening_parts.cache_clear()
    try:
        held = Boundary(workspace=tmp_path / "ws", mode="auto", hidden=(), references=(), links=(), read_only=(),
                        heldout=(tmp_path / "held.dat",), network=True, command_network=False, unprotected_ok=False)
        assert "landlock" in dict(held.missing) and "Linux 6.12" in dict(held.missing)["landlock"]
        assert surface_door(held, "abstract sockets") == "landlock"
        problems = start_problems(held)
        assert len(problems) == 1 and 'open_doors = ["landlock"]' in problems[0], problems
        assert start_problems(replace(held, open_doors=("landlock",))) == []
        offline = replace(held, network=False)
        assert "landlock" not in dict(offline.missing) and start_problems(offline) == []
        assert "landlock" in dict(replace(offline, command_network=True).missing)
        assert PolicyConfig(open_doors=["landlock"]).open_doors == ["landlock"]
    finally:
        probe.hardening_parts.cache_clear()


def test_the_survey_runs_once_per_namespace_and_without_one_says_so_once(tmp_path, monkeypatch):
    """`check` takes the boundary rows of doctor's boundary_checks and probes the surfaces itself: boundary_checks
    must not run the survey (it ran four times a check); without a namespace the survey is one line, not ten."""
    from nightshift.supervisor.cli.doctor import boundary_checks
    from nightshift.supervisor.sandbox import survey as survey_module
    from nightshift.supervisor.sandbox.boundary import boundary_for_oracle

    def counted(*args, **kwargs):
        raise AssertionError("boundary_checks ran the survey")

    monkeypatch.setattr(survey_module, "survey", counted)
    (tmp_path / "nightshift.toml").write_text("")
    assert boundary_checks(tmp_path)
    monkeypatch.undo()
    lines = survey_module.survey_lines(boundary_for_oracle(tmp_path, None, mode="off"))
    assert lines == ['OPEN    every surface: no namespace ([policy] sandbox = "off")'], lines
    (tmp_path / "nightshift.toml").write_text('[policy]\nsandbox = "off"\n')
    namespace = next(detail for _ok, what, detail in boundary_checks(tmp_path) if what == "namespace")
    assert namespace.startswith('sandbox: off (none): [policy] sandbox = "off"') and "bubblewrap works" not in namespace, namespace


def test_door_names_come_from_one_list_and_a_refused_rerun_names_every_open_door(monkeypatch, capsys):
    from nightshift.supervisor.cli.attest_verbs import verify_result_main
    from nightshift.supervisor.cli.main import build_parser
    from nightshift.supervisor.config.doors import DOORS, PART_DOORS
    from nightshift.supervisor.config.policy import PolicyConfig
    from nightshift.supervisor.sandbox import probe

    assert PolicyConfig(open_doors=list(PART_DOORS)).open_doors == list(PART_DOORS)
    parser = build_parser()
    for door in DOORS:
        assert parser.parse_args(["verify-result", "HEAD", "--accept-open", door]).accept_open == [door]
    monkeypatch.setattr(probe, "open_parts", lambda mode, shared_network=True: [
        ("userns", "no user namespace"), ("seccomp", "no seccomp filter"), ("landlock", "no Landlock scope")])
    assert verify_result_main("HEAD", None, True, [], [], None, accept_open=["userns"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--accept-open seccomp --accept-open landlock" in err, err
    assert "no seccomp filter" in err and "no Landlock scope" in err and "userns" not in err, err


def test_deny_read_and_sockets_take_absolute_paths_only_and_are_stripped():
    """A relative deny_read entry ("foo") was taken relative to wherever the supervisor started: refused in one
    line that names the key, as sockets are; surrounding spaces are not part of a path."""
    import pytest

    from nightshift.supervisor.config.schema import ConfigError, parse_config

    for key in ("deny_read", "sockets"):
        with pytest.raises(ConfigError) as err:
            parse_config(f'goal = "g"\n[policy]\n{key} = ["foo"]\n')
        message = str(err.value)
        assert f"policy.{key}" in message and "'foo'" in message and len(message.splitlines()) == 1, message
    policy = parse_config('goal = "g"\n[policy]\ndeny_read = [" ~/.x "]\nsockets = [" /run/a.sock"]\n').policy
    assert policy.deny_read == ["~/.x"] and policy.sockets == ["/run/a.sock"]
