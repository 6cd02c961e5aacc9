"""Benchmark of issue 27's guards: what treating the workspace as hostile costs nightshift's own processes.

1. Per git call: `git status --porcelain` in a workspace made by `nightshift init` (50 files), plain against through
   the guard (gitguard.run_git: the environment config, the drivers' cache checked by stat), interleaved, medians.
2. Per stop (goal: under 5 ms added): what a stop now does besides what it did before: the control files compared
   with their snapshot (git_controls.restore, nothing to put back), the guard's environment applied to the
   supervisor's repository (gitops.guard), CLAUDE.md and CHANGELOG.md read through run/untrusted.py instead of
   open(), and the check-attr call before a commit. Medians of interleaved rounds; the added time is the guarded
   figure minus the plain one where there is a plain one.

Usage: python bench/bench_guards.py [--rounds 200]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import against_goal, info, percentile  # noqa: E402
from nightshift.supervisor import gitguard, gitops  # noqa: E402
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace  # noqa: E402
from nightshift.supervisor.run import untrusted  # noqa: E402
from nightshift.supervisor.verify import git_controls  # noqa: E402
from nightshift.supervisor.commit_refusals import refused_paths  # noqa: E402
from nightshift.supervisor.verify.nested_repos import check_nested_repos  # noqa: E402

GOAL_STOP_MS = 5.0


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    init_workspace(ws, InitOptions(goal="bench", agent="command"))
    for i in range(50):
        (ws / f"f{i}.py").write_text(f"x = {i}\n" * 20)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench"], cwd=ws, check=True, env=env)
    return ws


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        store = Path(tmp) / "git-controls"
        git_controls.prepare(ws)
        git_controls.snapshot(ws, store)
        repo = gitops.open_repo(ws)
        base = gitops.head_sha(repo)
        plain_git, guarded_git, controls, guard, reads_plain, reads_guarded, attrs, nested, refused = \
            ([] for _ in range(9))
        for _ in range(args.rounds):
            plain_git.append(_timed(lambda: subprocess.run(["git", "status", "--porcelain"], cwd=ws,
                                                           capture_output=True)))
            guarded_git.append(_timed(lambda: gitguard.run_git(ws, "status", "--porcelain")))
            controls.append(_timed(lambda: git_controls.restore(ws, store)))
            guard.append(_timed(lambda: gitops.guard(repo)))
            reads_plain.append(_timed(lambda: [(ws / n).read_text(errors="replace")
                                               for n in ("CLAUDE.md", "CHANGELOG.md")]))
            reads_guarded.append(_timed(lambda: [untrusted.read_text(ws, n) for n in ("CLAUDE.md", "CHANGELOG.md")]))
            attrs.append(_timed(lambda: gitops._filtered(repo, [f"f{i}.py" for i in range(50)])))
            nested.append(_timed(lambda: check_nested_repos(ws, [f"f{i}.py" for i in range(50)], base, {})))
            refused.append(_timed(lambda: refused_paths(ws, [f"f{i}.py" for i in range(50)])))
    med = lambda xs: percentile(xs, 50)  # noqa: E731
    print(f"bench_guards: {args.rounds} interleaved rounds, medians (issue 27)")
    print(info("git status, plain", med(plain_git), "ms"))
    print(info("git status, guarded (run_git)", med(guarded_git), "ms"))
    print(info("  added per git call", med(guarded_git) - med(plain_git), "ms"))
    print(info("control files compared with the snapshot", med(controls), "ms"))
    print(info("guard applied to the supervisor's repository", med(guard), "ms"))
    print(info("CLAUDE.md + CHANGELOG.md, untrusted minus open()", med(reads_guarded) - med(reads_plain), "ms"))
    print(info("check-attr before a commit (no filter defined)", med(attrs), "ms"))
    print(info("nested repositories, gitlinks (38: an index read)", med(nested), "ms"))
    print(info("what a commit never takes, 50 changed paths (lstat)", med(refused), "ms"))
    per_stop = (med(controls) + med(guard) + max(0.0, med(reads_guarded) - med(reads_plain)) + med(attrs)
                + med(nested) + med(refused)
                + 3 * max(0.0, med(guarded_git) - med(plain_git)))  # a stop makes about three git calls of ours
    print(against_goal("added per stop (the sum above, 3 git calls)", per_stop, GOAL_STOP_MS, "ms"))


if __name__ == "__main__":
    main()
