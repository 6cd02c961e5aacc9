"""The command line's conventions (issue 40): `--version` names the version and the source commit, every verb and
option has help text, a verb's --help is its own and lists the exit codes it returns, and shell completion for
bash and zsh is one command away (generated from the parser by shtab, so it cannot drift).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nightshift.supervisor.cli.completion import _actions
from nightshift.supervisor.cli.parser import build_parser
from nightshift.supervisor.cli.watch.outcome import MEANING
from tests.fixtures_core import nightshift

ROOT = Path(__file__).resolve().parents[1]


def test_version_names_the_version_and_the_source_commit():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    for flag in ("--version", "-V"):
        out = nightshift(flag, cwd=Path("/"))
        assert out.returncode == 0, out.stderr
        assert re.match(r"nightshift \d+\.\d+", out.stdout), out.stdout
        if head.returncode == 0:  # run from a checkout (make install is editable): its HEAD, read without git
            assert f"commit {head.stdout.strip()[:12]}" in out.stdout, out.stdout


def test_every_verb_and_option_has_help():
    missing = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                listed = {a.dest: a.help for a in action._choices_actions}
                for name, sub in action.choices.items():
                    if name != "supervise" and not listed.get(name):
                        missing.append(f"{path} {name} (the verb)")
                    walk(sub, f"{path} {name}")
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "nightshift")
    assert not missing, "no help text: " + "; ".join(missing)
    assert len(list(_actions(build_parser()))) > 100  # the walk reached the sub-commands' options


def test_watchdog_install_help_is_its_own():
    out = nightshift("watchdog", "install", "--help")
    assert out.returncode == 0
    assert "usage: nightshift watchdog install" in out.stdout and "--every" in out.stdout
    assert "{install,remove" not in out.stdout  # not the parent's list of actions
    status = nightshift("watchdog", "status", "--help").stdout
    assert "exit codes" in status and re.search(r"^\s+1\s+not installed", status, re.M)


def test_wait_help_lists_the_exit_codes_the_readme_documents():
    text = nightshift("wait", "--help").stdout
    assert "exit codes:" in text
    for code, meaning in MEANING.items():
        assert re.search(rf"^\s+{code}\b", text, re.M), f"exit {code} ({meaning}) missing from wait --help"
    readme = (ROOT / "README.md").read_text()
    documented = re.findall(r"\*\*(\d+)\*\*", readme[readme.index("Exit codes: **0**"):][:900])
    assert set(documented) >= {"0", "10", "16", "124"}
    for code in documented:
        assert re.search(rf"^\s+{code}\b", text, re.M), f"README's exit {code} missing from wait --help"
    for verb in ("check", "verify-result", "doctor", "run", "demo", "compare"):
        assert "exit codes:" in nightshift(verb, "--help").stdout, verb


def test_bash_completion_script_is_valid_and_completes_the_verbs(tmp_path):
    out = nightshift("completion", "bash")
    assert out.returncode == 0, out.stderr
    script = tmp_path / "nightshift.bash"
    script.write_text(out.stdout)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    # Tab after "nightshift wa", as bash would ask the completion function
    def offered(word: str) -> set[str]:
        probe = (f'source {script}; COMP_WORDS=(nightshift {word}); COMP_CWORD=1; COMP_LINE="nightshift {word}"; '
                 'COMP_POINT=${#COMP_LINE}; _shtab_nightshift; printf "%s\\n" "${COMPREPLY[@]}"')
        return set(subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.split())

    assert {"wait", "watchdog"} <= offered("wa") and "supervise" not in out.stdout
    every = offered("")  # Tab after "nightshift ": the verbs themselves, not words found anywhere in the script
    assert {"init", "run", "check", "status", "report", "verify-result", "completion"} <= every, every


def test_zsh_completion_script_names_the_verbs(tmp_path):
    out = nightshift("completion", "zsh")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("#compdef nightshift")
    for verb in ("init", "run", "check", "wait", "watchdog", "report"):
        assert re.search(rf"^\s+{verb}:'", out.stdout, re.M), verb
    if not shutil.which("zsh"):
        if os.environ.get("CI") == "true":
            pytest.fail("zsh is missing: make test installs it (.ci/tools/zsh.sh)")
        pytest.skip("zsh is not installed: the script's syntax is checked only where zsh is (apt-get install zsh)")
    script = tmp_path / "_nightshift"
    script.write_text(out.stdout)
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True).returncode == 0


def test_completion_of_an_unknown_shell_is_one_line():
    out = nightshift("completion", "fish")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "invalid choice" in out.stderr
