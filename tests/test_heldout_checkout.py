"""The clean checkout the held-out tests run in (verify/heldout_checkout.py), unit by unit: the candidate's code run
by them sees none of nightshift's private stores (the reports, the held-out references, the held-out files), and
writing the held-out tests in takes whatever the candidate has at their paths. Real git, bubblewrap and pytest."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.run.paths import user_state_dir
from supervisor.sandbox.boundary import Boundary
from tests.fixtures_core import require_tool
from tests.fixtures_namespace import need_namespace

COMMAND = f"{sys.executable} -m pytest -q -p no:cacheprovider"
PEEK = "import os\n\n\ndef seen(paths):\n    return [p for p in paths if os.path.exists(p)]\n"


class Held:
    """A committed workspace, a store of held-out tests as init keeps it (beside a held-out reference, in the user's
    state folder), an earlier report in it, and the boundary a run with both would have."""

    def __init__(self, tmp_path: Path):
        self.ws = tmp_path / "ws"
        home = user_state_dir() / "heldout" / "init-ws-0123456789ab"
        self.store, self.reference = home / "tests", home / "bao.csv"

    def write(self, tests: dict[str, str], files: dict[str, str]) -> "Held":
        for rel, text in {**files, "lib/__init__.py": "", "lib/peek.py": PEEK}.items():
            (self.ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / rel).write_text(text)
        for rel, text in tests.items():
            (self.store / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.store / "files" / rel).write_text(text)
        (self.store / "reports").mkdir()
        (self.store / "reports" / "run-1-t1.json").write_text('{"outcomes": {}}')
        self.reference.write_text("x,y\n1,2\n")
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(self.ws)]
        subprocess.run(["git", "init", "-q", str(self.ws)], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "start"], check=True)
        self.boundary = Boundary(workspace=self.ws.resolve(), mode="auto",
                                 hidden=(self.reference, user_state_dir() / "heldout", self.store.resolve()),
                                 references=(), links=(), read_only=(), heldout=(self.reference, self.store.resolve()),
                                 network=False, command_network=False, unprotected_ok=False)
        return self

    def run(self, kept: set[str] = frozenset()):
        from supervisor.verify.heldout_checkout import run_heldout
        return run_heldout(self.ws, self.store, "run-1-t2", COMMAND, 120, self.boundary, set(kept))


@pytest.fixture(autouse=True)
def _tools():
    require_tool("git")
    need_namespace()


def test_the_candidates_code_sees_no_report_no_held_out_reference_and_no_held_out_file(tmp_path):
    held = Held(tmp_path)
    private = [str(p) for p in (held.store / "reports", held.reference, held.store / "files", held.store.parent)]
    peek = ("from lib.peek import seen\n\n\ndef test_nothing_private_is_in_sight():\n"
            f"    assert seen({private!r}) == []\n")
    found = held.write({"tests/test_peek.py": peek}, {"tests/test_lib.py": "def test_lib():\n    pass\n"}).run()
    assert found.problem is None and found.outcomes == {"tests/test_peek.py::test_nothing_private_is_in_sight":
                                                        "passed"}, found
