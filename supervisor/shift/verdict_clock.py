"""A verdict with a deadline, in a worker thread: while a stop is verified the supervisor keeps its heartbeat and
answers `status`, `stop` and the TUI (its loop ticks), and a step that never answers (a read the agent made block,
a git that hangs) fails the verdict, naming the step, instead of holding the run.

The deadline is the sum of what the configured steps may take (the oracle's timeout, the test and verify
commands', the held-out tests' run at a claim of done, the judge's with its retries) plus a margin for the in-process checks. A step left hanging is a daemon
thread: it cannot hold the supervisor's exit.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from nightshift.supervisor.verify.pipeline import STEPS

MARGIN = 300.0  # seconds for the checks that run no command (plan, notes, git, integrity, the copy scan)


def deadline_for(config: Any) -> float:
    total = MARGIN
    if config.oracle is not None:
        total += float(config.oracle.timeout)
    if config.verify.test_command:
        total += float(config.verify.timeout)
    total += float(config.verify.timeout) * len(config.verify.commands or [])
    if getattr(config.verify, "heldout_tests", ""):  # their run over the candidate has the test command's timeout
        total += float(config.verify.timeout)
    judge = getattr(config, "judge", None)
    if judge is not None and judge.enabled:
        total += float(judge.timeout) * (1 + int(judge.max_retries))
    return total


def verify_in_time(verify: Callable[[], Any], timed_out: Callable[[str, float], Any], tick: Callable[[], None],
                   deadline: float, every: float = 0.5) -> Any:
    """``verify()`` in a worker; ``tick()`` every ``every`` seconds meanwhile; past ``deadline`` seconds,
    ``timed_out(step, deadline)`` stands for the verdict. An exception of ``verify`` is raised here."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["verdict"] = verify()
        except BaseException as exc:  # noqa: BLE001 - handed to the loop, which records it like any crash
            box["error"] = exc
        finally:
            STEPS.pop(threading.get_ident(), None)  # one entry per live verdict, not one per verdict ever run

    worker = threading.Thread(target=work, name="verdict", daemon=True)
    worker.start()
    end = time.monotonic() + deadline
    while worker.is_alive() and time.monotonic() < end:
        tick()
        worker.join(timeout=every)
    if "verdict" in box:
        return box["verdict"]
    if "error" in box:
        raise box["error"]
    step = STEPS.get(worker.ident or 0, "start")
    return timed_out(step, deadline)
