"""What nightshift adds to a graded test command (verify/test_plugin.py, probes/nightshift_tests.py) reaches every
pytest the command starts, whatever shape the command has (its own PYTHONPATH, another interpreter without nightshift,
make, a script, `cd sub &&`, pytest twice, a pipe), and the preflight's run of it is the verdict's; a command that
cannot serve a run is named with its fix. Real pytest, real make, a second virtual environment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.verify.baseline import take_baseline
from nightshift.supervisor.verify.checks import check_tests, run_tests
from nightshift.supervisor.verify.ratchet import Ratchet

LIB = "def add(a, b):\n    return a + b\n"
TESTS = ("from lib import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
         "def test_add_words(tmp_path):\n    said = add('a', 'b')\n    assert said == 'ab'\n\n\n"
         "def test_add_zero():\n    assert 0 == add(0, 0)\n")
IDS = {"tests/test_lib.py::test_add", "tests/test_lib.py::test_add_words", "tests/test_lib.py::test_add_zero"}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("ws")
    (ws / "tests").mkdir()
    (ws / "lib.py").write_text(LIB)
    (ws / "tests" / "test_lib.py").write_text(TESTS)
    (ws / "Makefile").write_text(f"PYTHON = {sys.executable}\n\ntest:\n\t$(PYTHON) -m pytest -q tests\n")
    (ws / "run-tests.sh").write_text(f"#!/bin/sh\ncd tests && {sys.executable} -m pytest -q --rootdir=.. .\n")
    (ws / "run-tests.sh").chmod(0o755)
    (ws / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    return ws


@pytest.fixture(scope="module")
def other_python(tmp_path_factory) -> Path:
    """A virtual environment without nightshift in it, whose pytest is the test venv's (a .pth there names its
    site-packages, whose own .pth files, nightshift's editable install among them, are not read)."""
    env = tmp_path_factory.mktemp("env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "pytest_only.pth").write_text(str(Path(pytest.__file__).resolve().parents[1]) + "\n")
    probe = subprocess.run([str(env / "bin" / "python"), "-c", "import nightshift"], capture_output=True)
    assert probe.returncode != 0, "the second environment sees nightshift: it proves nothing"
    return env / "bin" / "python"


COMMANDS = {
    "its own PYTHONPATH": "PYTHONPATH=. {py} -m pytest -q",
    "export of its own PYTHONPATH": "export PYTHONPATH=.; {py} -m pytest -q tests",
    "another interpreter and its own PYTHONPATH": "PYTHONPATH=. {other} -m pytest -q",
    "make": "make -s test",
    "cd sub": "cd tests && PYTHONPATH=.. {py} -m pytest -q -x",
    "a script": "./run-tests.sh",
    "pytest twice": "{py} -m pytest -q tests/test_lib.py::test_add; {py} -m pytest -q -k 'words or zero'",
    "a pipe": "{py} -m pytest -q 2>&1 | tail -3",
}


@pytest.mark.parametrize("shape", list(COMMANDS))
def test_every_shape_of_command_gives_per_test_results_and_carries_sentinels(project, other_python, tmp_path, shape):
    command = COMMANDS[shape].format(py=sys.executable, other=other_python)
    ran = run_tests(command, project, 120, tmp_path, True, probe=True, sentinel_from=sorted(IDS))
    assert ran.status == 0 and ran.plugin, ran.output[-2000:]
    assert {t: r["outcome"] for t, r in ran.results.items()} == dict.fromkeys(IDS, "passed"), ran.output[-2000:]
    assert ran.planted >= 3 and ran.sentinels == [], (ran.sentinels, ran.output[-2000:])
    assert not (tmp_path / "sentinels.json").exists()  # the hidden names go no further than the run


def test_the_preflights_run_is_the_verdicts_and_the_agents_pytest_options_do_not_reach_either(project, tmp_path,
                                                                                              monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing_at_all")  # the supervisor's own environment: not the run's
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    command = f"PYTHONPATH=. {sys.executable} -m pytest -q"
    base = take_baseline(command, project, 120, tmp_path / "pre", True, "preflight")
    assert base.problem is None and set(base["passing"]) == IDS and base["plugin"], base
    (tmp_path / "verdict").mkdir()
    check = check_tests(command, project, 120, tmp_path / "verdict", True,
                        Ratchet(kept=set(base["passing"]), baseline=set(base["passing"])))
    assert check.passed and set(check.data["passed_tests"]) == set(base["passing"]), check


def test_a_script_that_sets_its_own_pythonpath_runs_as_without_nightshift_and_check_says_so(project, tmp_path):
    script = project / "own-path.sh"
    script.write_text(f"#!/bin/sh\nexport PYTHONPATH=/nonexistent\nexec {sys.executable} -m pytest -q\n")
    script.chmod(0o755)
    try:
        base = take_baseline("./own-path.sh", project, 120, tmp_path, True, "preflight")
    finally:
        script.unlink()
    assert base.problem is None and base["exit_status"] == 0 and base["plugin"] is False, base
    said = base.describe()
    assert "pytest ran but nightshift's plugin did not reach it" in said and "None" not in said, said


def test_a_runner_other_than_pytest_is_said_unable_to_be_shown_to_fail(project, tmp_path):
    (project / "test_unit.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n"
                                          "    def test_one(self):\n        self.assertEqual(1, 1)\n")
    try:
        base = take_baseline(f"{sys.executable} -m unittest test_unit", project, 120, tmp_path, True, "preflight")
    finally:
        (project / "test_unit.py").unlink()
    assert base.problem is None and base["passed_total"] == 1, base
    assert "this runner cannot be shown able to fail" in base.describe()


@pytest.mark.parametrize("command, named", [
    ("/nonexistent/python -m pytest -q", "cannot run"),
    ("{py} -m no_such_runner_module", "No module named no_such_runner_module"),
    ("{py} -m pytest -q --no-such-option", "pytest refused its arguments"),
    ("{py} -m pytest -q -k no_test_has_this_name", "ran no test"),
    ("{py} -m pytest -q 'tests", "is not valid shell"),
    ("true", None),
])
def test_a_test_command_that_cannot_serve_a_run_is_named_with_its_fix(project, tmp_path, command, named):
    base = take_baseline(command.format(py=sys.executable), project, 120, tmp_path, True, "preflight")
    if named is None:  # runs, counts nothing: only its exit status counts, and that is said without a Python repr
        assert base.problem is None and "None" not in base.describe(), base
        return
    assert named in (base.problem or ""), base
    assert "fix [verify] test_command" in base.problem or "fix its quoting" in base.problem, base.problem
    assert os.linesep not in base.problem


def test_a_new_sitecustomize_on_the_way_to_the_tests_is_moved_aside_like_a_new_conftest(tmp_path):
    from nightshift.supervisor.verify.boundary import move_new_config

    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_lib.py").write_text(TESTS)
    (ws / "sitecustomize.py").write_text("import _pytest.reports\n")  # runs before pytest where PYTHONPATH=. reaches
    (ws / "tests" / "usercustomize.py").write_text("")
    (tmp_path / "store").mkdir()
    moved = move_new_config(ws, tmp_path / "store", set(IDS), tmp_path / "aside")
    assert set(moved) == {"sitecustomize.py", "tests/usercustomize.py"}, moved
    assert not (ws / "sitecustomize.py").exists() and (tmp_path / "aside" / "sitecustomize.py").is_file()


def test_check_says_when_no_test_is_of_a_shape_a_sentinel_derives_from(tmp_path):
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_cls.py").write_text("class TestAdd:\n    def test_add(self):\n        assert 1 + 1 == 2\n")
    base = take_baseline(f"{sys.executable} -m pytest -q", ws, 120, tmp_path / "out", True, "preflight")
    assert base.problem is None and base["sentinels"] == 0, base
    assert "cannot be shown able to fail" in base.describe(), base.describe()
