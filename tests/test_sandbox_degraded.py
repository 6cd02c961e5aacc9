"""Issue 37 where the machine lacks a part of the sandbox (here: no libseccomp, as on a machine without it: the
binding is made unimportable): `check` names the surface that stays open and why, a run with held-out comparisons
is held unless `[policy] open_doors` accepts the door by name, and `verify-result --rerun` refuses likewise."""
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
    toml = workspace.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[policy]", '[policy]\nopen_doors = ["seccomp"]', 1)
                    if "[policy]" in toml.read_text() else toml.read_text() + '\n[policy]\nopen_doors = ["seccomp"]\n')
    accepted = nightshift("check", cwd=workspace.path, env=env, timeout=300)
    assert 'open_doors = ["seccomp"]' not in accepted.stdout + accepted.stderr
    rerun = nightshift("verify-result", "HEAD", "--rerun", cwd=workspace.path, env=env)
    assert rerun.returncode == 2 and "--accept-open seccomp" in rerun.stderr and "Traceback" not in rerun.stderr
