"""The sandbox's probes kept for the boot (supervisor/sandbox/probe_cache.py), both ways: a second process asks no
bubblewrap run and loads no libseccomp when nothing the answers depend on changed; a change of any of it (here the
bubblewrap binary and a sysctl) is a fresh probe; a failed probe is never kept; a kept program whose file no longer
holds its bytes is compiled again."""
from __future__ import annotations

import os
import subprocess

import pytest

from nightshift.supervisor.sandbox import probe, probe_cache, seccomp
from tests.fixtures_namespace import need_namespace


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def clear():
        for cached in (probe._probe, probe.hardening_parts, seccomp._kept_program, seccomp._remember):
            cached.cache_clear()
    clear()
    yield clear
    clear()


def _no_subprocess(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError(f"probed again: {args[0]}")
    monkeypatch.setattr(subprocess, "run", refused)


def test_a_success_is_kept_for_the_boot_and_any_change_probes_again(fresh, monkeypatch):
    need_namespace()
    assert probe.bwrap_problem() is None
    parts = probe.hardening_parts()
    first = seccomp.program_file()
    assert probe_cache.load(probe.shutil.which("bwrap")).get("namespace") == "ok"
    fresh()  # a new process: nothing cached in memory
    with monkeypatch.context() as patched:
        _no_subprocess(patched)
        patched.setattr(seccomp, "_compiled", lambda nested=False: (_ for _ in ()).throw(AssertionError("compiled")))
        assert probe.bwrap_problem() is None and probe.hardening_parts() == parts
        assert seccomp.program_file() == first  # no libseccomp loaded
    fresh()
    real = probe_cache._read
    monkeypatch.setattr(probe_cache, "_read", lambda path: "0" if path == probe_cache.SYSCTLS[1] else real(path))
    calls = []
    original = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a[0]) or original(*a, **k))
    assert probe.bwrap_problem() is None and calls  # user.max_user_namespaces changed: probed afresh


def test_a_failed_probe_is_never_kept_and_another_bubblewrap_is_a_miss(fresh, tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    said = probe.bwrap_problem()
    assert said is not None and "No permissions to create new namespace" in said, said
    assert probe_cache.load(str(fake / "bwrap")) == {}  # a failure may be passing (a timeout): probed next time
    fresh()
    assert probe.bwrap_problem() == said


def test_a_kept_program_whose_file_changed_is_compiled_again(fresh):
    if seccomp.seccomp_problem() is not None:
        pytest.skip(seccomp.seccomp_problem())
    first = seccomp.program_file()
    fresh()
    first.write_bytes(b"not the program")
    again = seccomp.program_file()
    assert again == first and again.read_bytes() == seccomp._compiled()[0]  # the name is the content's hash
