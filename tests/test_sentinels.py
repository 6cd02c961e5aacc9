"""Sentinels (verify/sentinels.py): a graded test run carries tests derived from the real ones, so a run that forges
its results is named and fails the verdict, both ways: honest work (passing, or failing honestly) is never called
forged, and each cheat (a conftest.py that rewrites outcomes, a module that patches pytest's report at import, an
object equal to everything, an exit before the asserts, code that tells tests apart by name, a conftest.py that drops
tests) is caught. Real pytest runs through the verdict's own check."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.verify.checks import check_tests
from nightshift.supervisor.verify.ratchet import Ratchet
from nightshift.supervisor.verify.sentinels import choose

COMMAND = f"{sys.executable} -m pytest -q"
TESTS = ("from lib import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
         "def test_add_words():\n    said = add('a', 'b')\n    assert said == 'ab'\n\n\n"
         "def test_add_zero(tmp_path):\n    assert 0 == add(0, 0)\n\n\n"
         "def test_add_big():\n    total = add(10**6, 1)\n    assert total > 0\n    assert total == 1000001\n")
IDS = {f"tests/test_lib.py::{name}" for name in ("test_add", "test_add_words", "test_add_zero", "test_add_big")}
HONEST = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a + b + b\n"
PATCH = ("import _pytest.reports as _r\n_made = _r.TestReport.from_item_and_call.__func__\n\n\n"
         "def _passed(cls, item, call):\n    report = _made(cls, item, call)\n"
         "    report.outcome, report.longrepr = 'passed', None\n    return report\n\n\n"
         "_r.TestReport.from_item_and_call = classmethod(_passed)\n")
CONFTEST = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n"
            "        report.outcome, report.longrepr = 'passed', None\n")
ALWAYS = ("class Answer(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n\n"
          "def add(a, b):\n    return Answer(0)\n")
BY_NAME = ("import inspect\n\n\ndef add(a, b):\n"
           "    names = {f.function for f in inspect.stack()}\n"
           "    known = names & {'test_add', 'test_add_words', 'test_add_zero', 'test_add_big'}\n"
           "    return a + b if known else a + b + type(a)(1)\n")
DROPS = ("import ast\nimport pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_collection_modifyitems(items):\n"
         "    result = yield\n    names = {n.name for i in items for n in ast.parse(i.path.read_text()).body\n"
         "             if isinstance(n, ast.FunctionDef)}\n    items[:] = [i for i in items if i.name in names]\n"
         "    return result\n")


def _workspace(tmp_path: Path, lib: str, conftest: str | None = None) -> Path:
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "lib.py").write_text(lib)
    (ws / "tests" / "test_lib.py").write_text(TESTS)
    (ws / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    if conftest is not None:
        (ws / "tests" / "conftest.py").write_text(conftest)
    return ws


def _verdict(ws: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    return check_tests(COMMAND, ws, 120, out, True, Ratchet(kept=set(IDS), baseline=set(IDS)))


def test_honest_work_passes_with_its_sentinels_and_says_nothing_of_them(tmp_path):
    check = _verdict(_workspace(tmp_path, HONEST), tmp_path)
    assert check.passed and set(check.data["passed_tests"]) == IDS, check
    assert not any("sentinel" in line or "forge" in line or "_again" in line for line in check.lines), check.lines


def test_honestly_wrong_code_fails_on_its_regressions_and_is_not_called_forged(tmp_path):
    check = _verdict(_workspace(tmp_path, WRONG), tmp_path)
    assert not check.passed and "forge" not in " ".join(check.lines), check.lines
    assert any(line.startswith("failed: tests/test_lib.py::test_add ") for line in check.lines), check.lines


@pytest.mark.parametrize("lib, conftest, said", [
    (WRONG, CONFTEST, "must fail as passed"),  # ten lines of conftest.py rewriting outcomes
    (WRONG + PATCH, None, "must fail as passed"),  # the code under test patches pytest's report at import
    (ALWAYS, None, "must fail as passed"),  # an object equal to everything (the equality probe names it too)
    (BY_NAME, None, "tells tests apart by name"),  # right answers only for the tests it knows
    (WRONG, DROPS, "never reported"),  # a conftest.py that drops every test its file does not define
], ids=["conftest", "patched-report", "always-equal", "by-name", "drops"])
def test_a_forged_test_run_fails_the_verdict_saying_what_the_sentinels_saw(tmp_path, lib, conftest, said):
    check = _verdict(_workspace(tmp_path, lib, conftest), tmp_path)
    assert not check.passed and any(said in line for line in check.lines), check.lines
    assert "forge results" in check.summary or said != "must fail as passed", check.summary


def test_an_exit_before_the_asserts_fails_the_verdict(tmp_path):
    check = _verdict(_workspace(tmp_path, "import sys\nsys.exit(0)\n" + HONEST), tmp_path)
    assert not check.passed and any(line.startswith("vanished: ") for line in check.lines), check.lines


def test_a_sentinel_is_its_tests_own_lines_at_its_lines_with_the_expected_value_changed(tmp_path):
    ws = _workspace(tmp_path, HONEST)
    chosen = choose(ws, sorted(IDS), must_fail=4, must_pass=0)
    source = (ws / "tests" / "test_lib.py").read_text().splitlines()
    assert len(chosen) == 4 and all(s.expect == "fail" for s in chosen)
    for sentinel in chosen:
        origin = sentinel.origin.split("::")[1]
        node = next(n for n in ast.parse(sentinel.source).body if isinstance(n, ast.FunctionDef))
        assert node.name.startswith(origin + "_") and node.name != origin and node.lineno == next(
            i for i, line in enumerate(source, 1) if line.startswith(f"def {origin}("))
        assert "add(" in sentinel.source  # the same calls
        expected = [n for n in ast.walk(node) if isinstance(n, ast.Compare)][-1]
        values = [ast.unparse(expected.left), ast.unparse(expected.comparators[0])]
        assert "float('nan')" in values or any(len(v) > 20 for v in values), values


def test_a_test_that_cannot_run_twice_in_one_process_is_not_held_against_honest_work(tmp_path):
    # The must-pass copy runs after its original: state the original left (a name registered twice) makes it error,
    # which is not a forgery.
    ws = _workspace(tmp_path, HONEST)
    (ws / "tests" / "test_once.py").write_text(
        "REGISTERED = set()\n\n\ndef register(name):\n    if name in REGISTERED:\n"
        "        raise ValueError('registered twice')\n    REGISTERED.add(name)\n\n\n"
        "def test_register():\n    register('x')\n    assert 'x' in REGISTERED\n")
    ids = {"tests/test_once.py::test_register"}  # the one test the sentinels come from: its copy is planted
    out = tmp_path / "out"
    out.mkdir()
    check = check_tests(COMMAND, ws, 120, out, True, Ratchet(kept=ids, baseline=ids))
    assert check.passed and not any("forge" in line or "apart" in line for line in check.lines), check.lines


FORGE_PLUGIN = CONFTEST  # the same ten lines, loaded by pytest as a plugin by entry point instead of as a conftest
ENTRY_POINTS = "[pytest11]\nforge = forge_plugin\n"


def _with_entry_point(ws: Path) -> Path:
    """A plugin registered as a distribution in the workspace's top folder: `PYTHONPATH=.` puts it on pytest's path,
    and pytest loads every [pytest11] entry point it finds there."""
    (ws / "forge_plugin.py").write_text(FORGE_PLUGIN)
    (ws / "forge-1.0.dist-info").mkdir()
    (ws / "forge-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: forge\nVersion: 1.0\n")
    (ws / "forge-1.0.dist-info" / "entry_points.txt").write_text(ENTRY_POINTS)
    return ws / "forge-1.0.dist-info" / "entry_points.txt"


def test_a_plugin_the_agent_registers_by_entry_point_is_moved_aside_and_its_forgery_named(tmp_path):
    """A new entry point on the tests' path is test configuration: moved aside before the graded run, like a new
    conftest.py; where it runs all the same (a verdict's own run with it in place), the sentinels name the forgery."""
    from nightshift.supervisor.verify.boundary import move_new_config
    from nightshift.supervisor.verify.suite_config import config_files

    ws = _workspace(tmp_path, WRONG)
    (tmp_path / "store").mkdir()
    made = _with_entry_point(ws)
    assert made in config_files(ws, {ws / "tests" / "test_lib.py"})
    out = tmp_path / "out"
    out.mkdir()
    forged = check_tests(f"PYTHONPATH=. {COMMAND}", ws, 120, out, True, Ratchet(kept=set(IDS), baseline=set(IDS)))
    assert not forged.passed and any("must fail as passed" in line for line in forged.lines), forged.lines
    moved = move_new_config(ws, tmp_path / "store", set(IDS), tmp_path / "aside")  # (pytest.ini is new here too)
    where = moved["forge-1.0.dist-info/entry_points.txt"]
    assert where == str(tmp_path / "aside" / "forge-1.0.dist-info" / "entry_points.txt"), moved
    assert not made.exists()
    again = tmp_path / "again"
    again.mkdir()
    honest = check_tests(f"PYTHONPATH=. {COMMAND}", ws, 120, again, True, Ratchet(kept=set(IDS), baseline=set(IDS)))
    assert not honest.passed and not any("forge" in line for line in honest.lines), honest.lines  # wrong, honestly


def test_an_entry_point_without_a_pytest_plugin_is_not_test_configuration(tmp_path):
    """Honest shape: a project's own distribution metadata (console scripts) stays the agent's to edit. (A link is
    never followed to find one, as for conftest.py: what loads through a link is left to the sentinels.)"""
    from nightshift.supervisor.verify.suite_config import config_files

    ws = _workspace(tmp_path, HONEST)
    (ws / "tool-1.0.dist-info").mkdir()
    (ws / "tool-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\ntool = lib:add\n")
    assert config_files(ws, {ws / "tests" / "test_lib.py"}) == {ws / "pytest.ini"}
    check = _verdict(ws, tmp_path)
    assert check.passed, check.lines
