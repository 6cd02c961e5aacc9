"""Issue 47, bad input at the boundary's tier: each machine that cannot give bubblewrap's namespace is named with
its cause and that cause's fix, never a traceback: user namespaces off by each knob (read from a /proc/sys tree the
test writes), AppArmor's restriction, a container, bubblewrap missing (the package of the distribution in
/etc/os-release), bubblewrap setuid-only; a kernel without Landlock (the seccomp tier, where held-out runs stop
unless accepted), and without libseccomp too (nothing at all); the launcher that cannot apply what it was told
fails closed in one line."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from nightshift.supervisor.sandbox import diagnose, tier as tiers
from nightshift.supervisor.sandbox.boundary import Boundary, start_problems


def _sysctl(tmp_path: Path, **values: str) -> Path:
    root = tmp_path / "sys"
    for name, value in values.items():
        folder, leaf = name.split(".", 1)
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / leaf).write_text(value + "\n")
    return root


@pytest.mark.parametrize("values,message,words", [
    ({"user.max_user_namespaces": "0"}, "bwrap: Creating new namespace failed: nesting depth or "
     "/proc/sys/user/max_*_namespaces exceeded (ENOSPC)", ("user.max_user_namespaces = 0 is RHEL 7's default",
                                                          "it is 0 here", "sysctl user.max_user_namespaces=15000")),
    ({"kernel.unprivileged_userns_clone": "0", "user.max_user_namespaces": "63000"},
     "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user "
     "namespaces.", ("kernel.unprivileged_userns_clone = 0", "sysctl kernel.unprivileged_userns_clone=1")),
    ({"kernel.apparmor_restrict_unprivileged_userns": "1"}, "bwrap: setting up uid map: Permission denied",
     ("AppArmor restricts", "/etc/apparmor.d/bwrap", "userns,", "apparmor_parser -r")),
])
def test_each_knob_that_switches_user_namespaces_off_is_named_with_its_fix(tmp_path, values, message, words):
    said = diagnose.userns_cause(message, _sysctl(tmp_path, **values))
    assert all(word in said for word in words), said
    assert "ask the machine's administrators" in said


def test_a_container_that_refuses_namespaces_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(diagnose, "in_container", lambda: "docker")
    said = diagnose.userns_cause("bwrap: Creating new namespace failed: Operation not permitted", _sysctl(tmp_path))
    assert "this docker container" in said and "--security-opt seccomp=unconfined" in said, said


@pytest.mark.parametrize("release,line", [
    ('ID=debian\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n', "apt-get install bubblewrap (Debian GNU/Linux 12"),
    ('ID="rhel"\nID_LIKE="fedora"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4"\n', "dnf install bubblewrap (Red Hat"),
    ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "dnf install bubblewrap"),
    ('ID="opensuse-leap"\nID_LIKE="suse opensuse"\n', "zypper install bubblewrap"),
    ('ID=plan9\n', "install the bubblewrap package of your distribution"),
])
def test_bubblewrap_missing_names_the_package_of_the_distribution_in_use(tmp_path, release, line):
    path = tmp_path / "os-release"
    path.write_text(release)
    assert diagnose.install_line(path).startswith(line), diagnose.install_line(path)


def test_a_setuid_bubblewrap_is_recognised(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("")
    os.chmod(fake, 0o755)
    assert not diagnose.setuid_bwrap(str(fake))
    os.chmod(fake, 0o4755)
    assert diagnose.setuid_bwrap(str(fake)) and not diagnose.setuid_bwrap(None)


def _held(tmp_path: Path, mode: str = "auto") -> Boundary:
    return Boundary(workspace=tmp_path / "ws", mode=mode, hidden=(), references=(), links=(), read_only=(),
                    heldout=(tmp_path / "held.dat",), network=False, command_network=False, unprotected_ok=False)


def test_a_kernel_without_landlock_gives_the_seccomp_tier_and_held_out_runs_stop_unless_accepted(tmp_path,
                                                                                                monkeypatch):
    from nightshift.supervisor.sandbox import boundary as boundary_module, probe
    why = "bubblewrap cannot create namespaces here (x): user namespaces are switched off"
    monkeypatch.setattr(tiers, "bwrap_problem", lambda: why)
    monkeypatch.setattr(probe, "bwrap_problem", lambda: why)
    monkeypatch.setattr(boundary_module, "namespace_problem", lambda mode: why)
    monkeypatch.setattr(tiers.landlock, "abi", lambda: 0)
    got = tiers.machine_tier()
    assert got.name == "seccomp" and not got.hides_files and got.confined
    assert "no Landlock in this kernel (Linux 5.13+ has it)" in got.why and why in got.why
    problems = start_problems(_held(tmp_path))
    assert len(problems) == 1 and "held-out comparisons cannot be protected here" in problems[0]
    assert '[policy] heldout = "unprotected"' in problems[0]
    assert start_problems(replace(_held(tmp_path), unprotected_ok=True)) == []
    refused = start_problems(_held(tmp_path, "landlock"))
    assert any('[policy] sandbox = "landlock" but this machine gives sandbox: seccomp' in p for p in refused)
    # and without libseccomp either: nothing at all, both causes named
    monkeypatch.setattr(tiers, "seccomp_problem", lambda: "no seccomp filter: libseccomp is not usable here")
    nothing = tiers.machine_tier()
    assert nothing.name == "off" and "no Landlock" in nothing.why and "libseccomp" in nothing.why
    assert nothing.label() == "sandbox: off (none)"


def test_landlock_without_a_namespace_holds_held_out_runs_and_each_policy_value_says_what_it_accepts(tmp_path,
                                                                                                   monkeypatch):
    from nightshift.supervisor.config.policy import PolicyConfig
    from nightshift.supervisor.sandbox import boundary as boundary_module
    why = "bubblewrap is not installed; fix: apt-get install bubblewrap"
    monkeypatch.setattr(tiers, "bwrap_problem", lambda: why)
    monkeypatch.setattr(boundary_module, "namespace_problem", lambda mode: why if mode != "off" else "off")
    monkeypatch.setattr(tiers.landlock, "abi", lambda: 4)
    got = tiers.machine_tier()
    assert got.name == "landlock" and got.hides_files and not got.scopes  # ABI 4: no signal/abstract scope
    assert start_problems(_held(tmp_path)) == [] and start_problems(_held(tmp_path, "landlock")) == []
    required = start_problems(_held(tmp_path, "required"))
    assert len(required) == 1 and 'sandbox = "landlock" (accepts Landlock without a namespace)' in required[0]
    assert why in required[0]
    assert PolicyConfig(sandbox="landlock").sandbox == "landlock"
    with pytest.raises(ValueError):
        PolicyConfig(sandbox="at-least-anything")


def test_the_launcher_that_cannot_apply_its_policy_fails_closed_in_one_line(tmp_path):
    from nightshift.supervisor.run.own_python import bare_argv
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"seccomp": str(tmp_path / "missing.bpf"), "landlock": False}))
    marker = tmp_path / "ran"
    done = subprocess.run([*bare_argv("nightshift.supervisor.sandbox.confine", str(policy)), "--", "touch",
                           str(marker)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 126 and not marker.exists()
    assert done.stderr.count("\n") == 1 and "the seccomp filter could not be applied" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("tier,label,trust,line", [
    ("full", "PASS", "yes: verified done at commit abcdef1234, sandbox: full", "VERIFIED DONE at commit abcdef1234, sandbox: full"),
    ("landlock", "PASS sandbox:landlock", "yes, within a weaker boundary: verified done at commit abcdef1234, sandbox: "
     "landlock (not full)", "VERIFIED DONE at commit abcdef1234, sandbox: landlock (weaker than full)"),
    ("off", "PASS sandbox:off", "yes, within a weaker boundary: verified done at commit abcdef1234, sandbox: off "
     "(not full)", "VERIFIED DONE at commit abcdef1234, sandbox: off (weaker than full)"),
])
def test_a_verified_done_in_a_weaker_tier_never_reads_as_a_full_one(tier, label, trust, line):
    """The TUI's verdict label, status's trust line and the report's verdict line, from the verdict's own record."""
    from types import SimpleNamespace

    from nightshift.supervisor.cli.report.html import verdict_line
    from nightshift.supervisor.cli.watch.outcome import trust_line
    from nightshift.tui.runs import verdict_label
    verdict = {"passed": True, "summary": "PASS: ...", "sandbox": tier}
    state = {"last_verdict": verdict, "phase": "finished", "outcome": "done", "accepted_base": "abcdef1234" * 4,
             "status": "done"}
    assert verdict_label(state) == label
    assert trust_line(state).startswith(f"trust      {trust};"), trust_line(state)
    final = {"verified": True, "sha": "abcdef1234" * 4, "reason": "ok", "sandbox": tier}
    css, said = verdict_line(SimpleNamespace(final=final))
    assert said == f"{line}: ok" and css == ("ok" if tier == "full" else "weak")


def test_the_push_back_names_a_weaker_tier_and_its_limit_for_the_agent():
    from nightshift.supervisor.shift.decide import findings
    failing = {"name": "tests", "passed": False, "summary": "tests: 1 failing", "lines": ["FAIL t::x"]}
    weaker = findings({"checks": [failing], "sandbox": "landlock"})
    first, rest = weaker.split("\n", 1)
    assert first.startswith("- this verdict was reached in sandbox: landlock, weaker than the full sandbox")
    assert "new files go in a folder of their own" in first and rest == "- tests: 1 failing\n    FAIL t::x"
    assert findings({"checks": [failing], "sandbox": "full"}) == rest
    assert findings({"checks": [], "sandbox": "off"}).endswith("- every check passes, but you did not claim the goal "
                                                             "is met")
