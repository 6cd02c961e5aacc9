"""Benchmark of issue #36's held-out tests: what a claim's run of them costs over running them plainly.

A workspace made by `nightshift init --holdout-tests` from a 1,000-test suite (50 files of 20 tests), 200 of them (10
files) held out. Each round, interleaved:
- plain: those 200 tests alone in a clean checkout: `git worktree add` of HEAD, the 200 tests copied in, pytest on
  them, the worktree removed;
- nightshift: the supervisor's run of them at a claim of done (verify/heldout_checkout.run_heldout): the candidate
  tree taken in a temporary index, checked out into the private store, unkept test configuration taken out, pytest
  with nightshift's plugin (per-test report, equality probe, sentinels) inside the run's namespace, the outcomes read, the checkout removed.
Goal: nightshift under 1.5x plain, the checkout included. Prints figures and the ratio of the medians, and of the
fastest rounds (on a loaded machine a round swings by 2x; the fastest round is what each costs itself).

Usage: python bench/bench_heldout_tests.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import against_goal, info, percentile  # noqa: E402

FILES, PER_FILE, HELD_FILES = 50, 20, 10
GOAL_RATIO = 1.5
COMMAND = f"{sys.executable} -m pytest -q -p no:cacheprovider"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}


def _suite(ws: Path) -> None:
    (ws / "lib").mkdir()
    (ws / "lib" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "tests").mkdir()
    for f in range(FILES):
        body = "from lib import add\n\n" + "".join(f"\ndef test_add_{f}_{t}():\n    assert add({f}, {t}) == {f + t}\n"
                                                   for t in range(PER_FILE))
        (ws / "tests" / f"test_m{f:02d}.py").write_text(body)


def _workspace(root: Path):
    from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
    from nightshift.supervisor.config.schema import parse_config

    ws = root / "ws"
    ws.mkdir()
    _suite(ws)
    held = [f"tests/test_m{f:02d}.py" for f in range(HELD_FILES)]
    init_workspace(ws, InitOptions(goal="bench", agent="command", test_command=COMMAND, holdout_tests=held))
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench"], cwd=ws, check=True, env=env)
    config = parse_config((ws / "nightshift.toml").read_text(), "nightshift.toml")
    return ws, config


def _plain(ws: Path, files: Path, where: Path) -> None:
    """The 200 tests alone in a clean checkout (a git worktree of HEAD), then the worktree removed."""
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(where), "HEAD"], cwd=ws, check=True,
                   capture_output=True)
    try:
        for path in files.rglob("*.py"):
            dest = where / path.relative_to(files)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        args = [str(p.relative_to(files)) for p in sorted(files.rglob("*.py"))]
        ran = subprocess.run([*COMMAND.split(), *args], cwd=where, capture_output=True, text=True)
        assert ran.returncode == 0, ran.stdout[-500:]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ws, check=True)


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")  # init's private store: never the user's own
        from nightshift.supervisor.sandbox.boundary import boundary_for
        from nightshift.supervisor.verify.heldout_checkout import run_heldout

        ws, config = _workspace(Path(tmp))
        store = Path(config.verify.heldout_tests)
        boundary = boundary_for(ws, config)
        plain, ours, seen = [], [], {}
        for i in range(args.rounds):
            plain.append(_timed(lambda: _plain(ws, store / "files", Path(tmp) / f"plain-{i}")))

            def held() -> None:
                seen["run"] = run_heldout(ws, store, f"bench-{i}", COMMAND, 600, boundary, set())
            ours.append(_timed(held))
        found = seen["run"]
    med = lambda xs: percentile(xs, 50)  # noqa: E731
    print(f"bench_heldout_tests: {FILES * PER_FILE} tests, {HELD_FILES * PER_FILE} held out; {args.rounds} "
          "interleaved rounds, medians (issue #36)")
    print(info("held-out tests run by nightshift", len(found.outcomes), "tests"))
    print(info("  of them passed", found.passed, "tests"))
    print(info("  sentinels run beside them (derived tests that must fail or pass)", found.planted, "tests"))
    print(info("  sentinel findings (0: the run is shown able to fail)", len(found.sentinels), ""))
    print(info("  in the namespace", int(boundary.problem is None), "(1 yes)"))
    print(info("plain: 200 tests alone in a clean git worktree", med(plain), "s"))
    print(info("nightshift: candidate tree, checkout, namespace, probe", med(ours), "s"))
    print(info("plain, fastest round", min(plain), "s"))
    print(info("nightshift, fastest round", min(ours), "s"))
    # On a shared machine a round's time swings by 2x with the load; the fastest rounds say what each costs itself
    print(against_goal("ratio nightshift / plain, medians (checkout included)", med(ours) / med(plain), GOAL_RATIO,
                       "x"))
    print(against_goal("ratio nightshift / plain, fastest rounds", min(ours) / min(plain), GOAL_RATIO, "x"))


if __name__ == "__main__":
    main()
