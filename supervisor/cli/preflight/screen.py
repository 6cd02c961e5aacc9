"""The preflight (`nightshift check`, and `nightshift run` / `submit` before they detach): one screen, each line ok
or a problem with its fix, so what would fail tonight fails now, while the user is still at the desk.

A check is a function ``check(ctx) -> Iterable[Line]``. ``CHECKS`` are the built-in ones, in screen order;
``EXTRA_CHECKS`` is the hook point for lines built elsewhere (the agent's boundary, issue #10; the references
out of the oracle command's reach, issue #14): ``register_check(fn)`` adds one, and it runs after the built-in
ones with the same context. A check that crashes becomes a FAIL line naming it, never a traceback.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from nightshift.supervisor.cli.preflight.lines import FAIL, NOTE, OK, SKIP, Line, PreflightContext  # noqa: F401

Check = Callable[[PreflightContext], Iterable[Line]]
# What the status line says while a check runs (cli/progress.py; a terminal only): the slow ones run commands.
DOING = {"config_lines": "reading nightshift.toml", "plan_lines": "reading the plan",
         "reference_lines": "hashing the references", "oracle_lines": "running the oracle command",
         "calibration_lines": "calibrating the comparisons", "test_lines": "running the tests (twice when quick, to find flaky ones)",
         "agent_lines": "checking the agent's CLI", "agent_turn_lines": "running one turn of the agent",
         "judge_lines": "checking the judge", "boundary_lines": "probing the namespace from inside",
         "slurm_lines": "asking Slurm (sbatch --test-only)"}
EXTRA_CHECKS: list[Check] = []  # the hook point: checks built outside this file (see register_check)


def register_check(check: Check) -> Check:
    """Add a check to every preflight (usable as a decorator); added once however often it is registered."""
    if check not in EXTRA_CHECKS:
        EXTRA_CHECKS.append(check)
    return check


def builtin_checks() -> list[Check]:
    from nightshift.supervisor.cli.preflight.agent import agent_lines, agent_turn_lines
    from nightshift.supervisor.cli.preflight.boundary import boundary_lines
    from nightshift.supervisor.cli.preflight.judge import judge_lines
    from nightshift.supervisor.cli.preflight.oracle import calibration_lines, oracle_lines, reference_lines
    from nightshift.supervisor.cli.preflight.workspace import config_lines, plan_lines, slurm_lines, test_lines

    return [config_lines, plan_lines, reference_lines, oracle_lines, calibration_lines, test_lines, agent_lines,
            agent_turn_lines, judge_lines, boundary_lines, slurm_lines]


@dataclass
class Preflight:
    workspace: Path
    lines: list[Line]
    baseline: dict | None
    out_dir: Path
    tests: dict | None = None  # the test ratchet's starting set (verify/baseline.py): the run's tests.baseline

    @property
    def failed(self) -> bool:
        return any(line.status == FAIL for line in self.lines)

    def problems(self) -> list[str]:
        return [f"{line.what}: {line.text}" for line in self.lines if line.status == FAIL]

    def render(self, check_only: bool = False) -> str:
        """The screen; ``check_only``: with what only `nightshift check` shows (Line.check_only)."""
        return "\n".join([row(line, check_only) for line in self.lines] + [self.verdict()])

    def verdict(self) -> str:
        """The screen's last line: how many problems, or ready."""
        count = sum(line.status == FAIL for line in self.lines)
        return (f"{count} problem(s): a run would fail; fix them and check again" if count
                else "ready: nothing found that would stop a run")

    def event_data(self) -> dict:
        """What the run's log keeps: the lines, and today's oracle figures (the run's starting point)."""
        base = self.baseline or {}
        return {"passed": not self.failed, "problems": self.problems(), "metric": base.get("metric"),
                "metrics": base.get("metrics") or {}, "summary": base.get("summary"),
                "lines": [{"status": l.status, "what": l.what, "text": l.text} for l in self.lines]}


def row(line: Line, check_only: bool = False) -> str:
    """A line of the screen: status, the part checked, the text (with what only `check` shows)."""
    return f"{line.status:4}  {line.what:12} {line.text}{line.check_only if check_only else ''}"


def run_preflight(workspace: Path, out_dir: Path | None = None, agent_turn: bool = False, job: bool = False,
                  backend: str | None = None, agent: str | None = None, scratch: dict | None = None,
                  extra: Iterable[Check] = (), on_line: Callable[[Line], None] | None = None) -> Preflight:
    """Every check in order; ``on_line`` is handed each line as soon as its check yields it (`check` prints it
    then, not after the last check). While a check runs, a terminal's status line says which (cli/progress.py)."""
    from nightshift.supervisor.cli.progress import step

    workspace = Path(workspace).resolve()
    if out_dir is not None:
        shutil.rmtree(out_dir, ignore_errors=True)  # a fresh folder: no stale JUnit file or oracle report
    out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="nightshift-check-"))
    out_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    ctx = PreflightContext(workspace, out_dir, agent_turn=agent_turn, job=job, backend=backend, agent=agent,
                           scratch=dict(scratch or {}))
    lines: list[Line] = []
    for check in [*builtin_checks(), *EXTRA_CHECKS, *extra]:
        if ctx.config is None and check.__name__ != "config_lines":
            break  # nothing else can be checked without a valid config (its line says why)
        name = getattr(check, "__name__", "check")

        def emit(line: Line) -> None:
            lines.append(line)
            if on_line:
                on_line(line)
        try:
            with step(f"check: {DOING.get(name, name.removesuffix('_lines').replace('_', ' '))}"):
                for line in check(ctx):  # a check's lines are generated as it goes: each is shown at once
                    emit(line)
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            emit(Line(FAIL, name, f"the check itself failed: {type(exc).__name__}: {exc}"))
    return Preflight(workspace, lines, ctx.baseline, out_dir, ctx.scratch.get("tests_baseline"))
