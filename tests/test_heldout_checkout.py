"""The clean checkout the held-out tests run in (verify/heldout_checkout.py), unit by unit, over a store init's own
functions made: the candidate's code run by them sees none of nightshift's private stores (the reports, the
held-out references, the held-out files), the user's test configuration beside them goes with them, and writing
them in takes whatever the candidate has at their paths. Real git, bubblewrap and pytest."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.cli.init.holdout_tests import move_tests, plan_tests, store_for
from nightshift.supervisor.sandbox.boundary import Boundary
from nightshift.supervisor.verify.heldout_checkout import CHECKOUTS
from tests.fixtures_core import require_tool
from tests.fixtures_namespace import need_namespace

COMMAND = f"{sys.executable} -m pytest -q -p no:cacheprovider"
PEEK = "import os\n\n\ndef seen(paths):\n    return [p for p in paths if os.path.exists(p)]\n"
VISIBLE = {"tests/test_lib.py": "def test_lib():\n    pass\n"}


class Held:
    """A workspace whose ``selection`` init held out into its store (beside a held-out reference, in the user's
    state folder), then committed; an earlier report in the store, and the boundary a run with both would have."""

    def __init__(self, tmp_path: Path, files: dict[str, str], *selection: str):
        self.ws = tmp_path / "ws"
        for rel, text in {**VISIBLE, **files, "lib/__init__.py": "", "lib/peek.py": PEEK}.items():
            (self.ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / rel).write_text(text)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(self.ws)]
        subprocess.run(["git", "init", "-q", str(self.ws)], check=True)
        move_tests(self.ws, plan_tests(self.ws, list(selection)))
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "start"], check=True)
        self.store = store_for(self.ws)
        self.reference = self.store.parent / "bao.csv"
        self.reference.write_text("x,y\n1,2\n")
        (self.store / "reports").mkdir()
        (self.store / "reports" / "run-1-t1.json").write_text('{"outcomes": {}}')
        self.boundary = Boundary(workspace=self.ws.resolve(), mode="auto",
                                 hidden=(self.reference, self.store.parent.parent, self.store.resolve()),
                                 references=(), links=(), read_only=(), heldout=(self.reference, self.store.resolve()),
                                 network=False, command_network=False, unprotected_ok=False)

    def run(self, kept: set[str] = frozenset()):
        from nightshift.supervisor.verify.heldout_checkout import run_heldout
        return run_heldout(self.ws, self.store, "run-1-t2", COMMAND, 120, self.boundary, set(kept))


@pytest.fixture(autouse=True)
def _tools():
    require_tool("git")
    need_namespace()


def test_the_candidates_code_sees_no_report_no_held_out_reference_and_no_held_out_file(tmp_path):
    store = store_for(tmp_path / "ws")
    private = [str(p) for p in (store / "reports", store.parent / "bao.csv", store / "files", store.parent)]
    peek = ("from lib.peek import seen\n\n\ndef test_nothing_private_is_in_sight():\n"
            f"    assert seen({private!r}) == []\n")
    found = Held(tmp_path, {"tests/test_peek.py": peek}, "tests/test_peek.py").run()
    assert found.problem is None and found.outcomes == {"tests/test_peek.py::test_nothing_private_is_in_sight":
                                                        "passed"}, found


FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef {name}():\n    return {value}\n"


def test_the_users_conftest_on_their_way_goes_with_them_and_wins_over_the_candidates(tmp_path):
    """tests/more/ holds only held-out tests: its conftest.py moves into the store with them. tests/conftest.py
    serves visible tests too: it stays, and a copy goes with them, which their run uses whatever the agent made of
    the workspace's."""
    held = Held(tmp_path, {"tests/conftest.py": FIXTURE.format(name="one", value=1),
                           "tests/more/conftest.py": FIXTURE.format(name="zero", value=0),
                           "tests/more/test_more.py":
                               "def test_fixtures(one, zero):\n    assert (one, zero) == (1, 0)\n"},
                "tests/more")
    assert not (held.ws / "tests" / "more").exists() and (held.ws / "tests" / "conftest.py").is_file()
    assert sorted(p.name for p in (held.store / "files" / "tests").rglob("conftest.py")) == ["conftest.py"] * 2
    (held.ws / "tests" / "conftest.py").write_text(FIXTURE.format(name="one", value=2))  # the agent's edit
    found = held.run()
    assert found.outcomes == {"tests/more/test_more.py::test_fixtures": "passed"}, found


def test_a_folder_the_candidate_has_where_a_held_out_test_goes_is_replaced_by_the_test(tmp_path):
    held = Held(tmp_path, {"tests/test_more.py": "def test_more():\n    pass\n"}, "tests/test_more.py")
    (held.ws / "tests" / "test_more.py").mkdir()
    (held.ws / "tests" / "test_more.py" / "data.txt").write_text("the agent's")
    found = held.run()
    assert found.outcomes == {"tests/test_more.py::test_more": "passed"}, found
    assert (held.ws / "tests" / "test_more.py" / "data.txt").read_text() == "the agent's"  # the workspace untouched


HELD_ADD = ("from lib.calc import add\n\n\ndef test_add_small():\n    assert add(1, 2) == 3\n\n\n"
            "def test_add_large():\n    total = add(10**9, 1)\n    assert total == 10**9 + 1\n")
FORGE_AT_IMPORT = ("import _pytest.reports as _r\n_made = _r.TestReport.from_item_and_call.__func__\n\n\n"
                   "def _passed(cls, item, call):\n    report = _made(cls, item, call)\n"
                   "    report.outcome, report.longrepr = 'passed', None\n    return report\n\n\n"
                   "_r.TestReport.from_item_and_call = classmethod(_passed)\n\n\ndef add(a, b):\n    return 0\n")


def test_a_candidate_that_forges_the_held_out_runs_report_is_caught_by_its_sentinels(tmp_path):
    held = Held(tmp_path, {"tests/test_add.py": HELD_ADD, "lib/calc.py": "def add(a, b):\n    return a + b\n"},
                "tests/test_add.py")
    honest = held.run()
    assert honest.sentinels == [] and set(honest.outcomes.values()) == {"passed"}, honest
    (held.ws / "lib" / "calc.py").write_text(FORGE_AT_IMPORT)  # wrong, and every failure reported as a pass
    forged = held.run()
    assert set(forged.outcomes.values()) == {"passed"} and any("must fail as passed" in line
                                                                for line in forged.sentinels), forged


def test_a_held_out_run_leaves_nothing_the_agent_can_read_no_cache_no_bytecode(tmp_path):
    held = Held(tmp_path, {"tests/test_add.py": HELD_ADD, "lib/calc.py": "def add(a, b):\n    return a + b\n"},
                "tests/test_add.py")
    before = {p for p in Path(CHECKOUTS).glob("nightshift-heldout-run-1-t2-*")}
    from nightshift.supervisor.verify.heldout_checkout import run_heldout
    found = run_heldout(held.ws, held.store, "run-1-t2", f"{sys.executable} -m pytest -q", 120, held.boundary, set())
    assert set(found.outcomes.values()) == {"passed"}, found
    left = subprocess.run(["git", "-C", str(held.ws), "status", "--porcelain", "--ignored"], capture_output=True,
                          text=True, check=True).stdout
    assert left == "", left  # no .pytest_cache, no __pycache__, no copy of a held-out test in the workspace
    assert {p for p in Path(CHECKOUTS).glob("nightshift-heldout-run-1-t2-*")} == before  # the checkout is gone
