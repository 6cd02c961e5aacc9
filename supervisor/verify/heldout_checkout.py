"""Running the held-out tests (`init --holdout-tests`) over a claim's candidate: the workspace as it would be committed
(git's own index of it, taken in a temporary index so the user's index is untouched) checked out into a private
folder under the host's /tmp (no namespace of nightshift's shows the host's /tmp: the checkout is out of every agent
process's sight, and outside every hidden folder, so its own run un-hides nothing), the held-out tests (and the
user's test configuration init kept with them) copied in, test configuration the run did not keep taken out, and
the test command run on the held-out files there, in the run's namespace, with nightshift's plugin: the equality probe and the
sentinels (verify/sentinels.py).

Git runs through gitguard (nothing the workspace names is executed); the workspace's files are never read here
but by git. The checkout and the held-out files stay hidden from every process of the agent.
"""
from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from nightshift.supervisor.candidate_index import stage_candidate
from nightshift.supervisor.commit_refusals import MAX_COMMIT_BYTES
from nightshift.supervisor.gitguard import run_git
from nightshift.supervisor.run import untrusted
from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.sandbox.mounts import HOST_TMP
from nightshift.supervisor.verify.checks import run_tests
from nightshift.supervisor.verify.suite_config import WHOLE_FILE, config_files
from nightshift.supervisor.verify.pytest_source import is_test_file, tests_in

MISSING = ("the held-out tests are missing from their store ([verify] heldout_tests in nightshift.toml: moved or "
           "deleted?): put them back, then `nightshift resume`")
# Where the checkouts are made: the host's /tmp, which every namespace replaces with a private one (sandbox/mounts.py)
CHECKOUTS = HOST_TMP


@dataclass
class HeldRun:
    """What one run of the held-out tests found (for the user: it never reaches the agent but as a band)."""
    tree: str = ""
    outcomes: dict[str, str] = field(default_factory=dict)  # held-out test id -> passed / failed / ... / did not run
    always_equal: dict[str, list[str]] = field(default_factory=dict)  # test id -> objects equal to anything
    sentinels: list[str] = field(default_factory=list)  # what the sentinels saw: the run forged its results
    planted: int = 0  # sentinels that ran beside them
    problem: str | None = None  # why they could not run at all

    @property
    def passed(self) -> int:
        return sum(o == "passed" for o in self.outcomes.values())


def held_ids(files: Path) -> list[str]:
    """The held-out tests' ids ("tests/test_x.py::test_y", "tests/test_x.py::TestZ") from their files, parsed."""
    out = []
    for path in sorted(p for p in files.rglob("*.py") if p.is_file() and is_test_file(p)):
        rel = str(path.relative_to(files))
        out += [f"{rel}::{n.name}" for n in tests_in(path.read_text(encoding="utf-8", errors="replace"))]
    return out


def command_problem(command: str) -> str | None:
    """Why the held-out tests cannot run with this test command (they are pytest's: ids, JUnit, the probe)."""
    if re.search(r"\bpytest\b", command):
        return None
    return f"held-out tests need a pytest test command ([verify] test_command is `{command}`): make it run pytest"


def candidate_tree(workspace: Path, index: Path, max_bytes: int = MAX_COMMIT_BYTES) -> str:
    """The tree the stop's commit would hold (candidate_index.py), in ``index``."""
    env = stage_candidate(workspace, index, max_bytes)
    return run_git(workspace, "write-tree", env=env, check=True).stdout.strip()


def _checkout(workspace: Path, index: Path, dest: Path) -> None:
    run_git(workspace, "checkout-index", "-a", "-f", f"--prefix={dest}/", env={"GIT_INDEX_FILE": str(index)},
            check=True)


def _unkept_config(clean: Path, held: list[Path], kept: set[str]) -> None:
    """A conftest.py or pytest.ini on the way to the held-out tests that neither the run kept nor the store holds
    (init keeps the user's there with the tests: written in with them) is the agent's: it could deselect or forge
    them, so it is taken out of the checkout."""
    ours = {p.resolve() for p in held}
    for path in config_files(clean, set(held)):
        rel = str(path.relative_to(clean.resolve()))
        if path.name in WHOLE_FILE and rel not in kept and path.resolve() not in ours:
            path.unlink()


def _put(clean: Path, rel: Path, data: bytes) -> None:
    """A held-out file into the checkout: ours wins over whatever the candidate has at its path, and never through a
    link it planted on the way (the held-out tests would be written wherever it points). A folder there is removed:
    the checkout is nightshift's own copy, not the agent's work (write_beneath keeps one, for the workspace)."""
    try:
        untrusted.write_beneath(clean, rel, data)
    except untrusted.Untrusted:
        there = clean / rel  # its parents are real folders of the checkout now: write_beneath made them so
        if there.is_symlink() or not there.is_dir():
            raise
        shutil.rmtree(there)  # a real folder: rmtree follows no link inside it
        untrusted.write_beneath(clean, rel, data)


def _match(results: dict[str, dict[str, str]], held: str) -> list[str]:
    return [t for t in results if t == held or re.sub(r"\[.*\]$", "", t) == held or t.startswith(held + "::")]


def run_heldout(workspace: Path, store: Path, name: str, command: str, timeout: float, boundary,
                kept: set[str], max_bytes: int = MAX_COMMIT_BYTES) -> HeldRun:
    """The held-out tests of ``store`` over the candidate, in a private folder under CHECKOUTS (removed afterwards);
    ``max_bytes``: [verify] max_commit_mb, what the candidate (as a commit) never takes."""
    files = store / "files"
    problem = command_problem(command)
    if problem:
        return HeldRun(problem=f"{problem}, then `nightshift resume`")
    ids = held_ids(files)
    if not ids:
        return HeldRun(problem=MISSING)
    work = Path(tempfile.mkdtemp(prefix=f"nightshift-heldout-{name}-", dir=CHECKOUTS))  # 0700
    clean, out, index = work / "candidate", make_private_dir(work / "out"), work / "index"
    try:
        tree = candidate_tree(workspace, index, max_bytes)
        _checkout(workspace, index, clean)
        held_files = []
        for path in sorted(p for p in files.rglob("*") if p.is_file()):
            rel = path.relative_to(files)
            _put(clean, rel, path.read_bytes())
            held_files.append(clean / rel)
        _unkept_config(clean, held_files, kept)
        inside = replace(boundary, workspace=clean.resolve())  # the store and the references stay hidden
        args = " ".join(shlex.quote(str(p.relative_to(clean))) for p in held_files
                        if p.suffix == ".py" and p.name not in WHOLE_FILE)  # the tests, not their conftest.py
        ran = run_tests(f"{command} {args}", clean, timeout, out, True, inside, probe=True, sentinel_from=ids)
        if ran.status is None:
            return HeldRun(tree, {t: "timed out" for t in ids})
        outcomes = {}
        for held in ids:
            matched = _match(ran.results, held)
            outcomes.update({t: ran.results[t]["outcome"] for t in matched} or {held: "did not run"})
        return HeldRun(tree, outcomes, ran.always_equal, ran.sentinels, ran.planted)
    finally:
        shutil.rmtree(work, ignore_errors=True)
