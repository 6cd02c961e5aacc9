"""At every verified done, before the run is finished: the verdict's attestation (supervisor/attest), written beside
the run and kept as a git note on the verified commit, recorded as an ``attest.written`` event. It never stops the
run from finishing: a failure is an ``attest.failed`` event with its reason, and `nightshift attest RUN` writes it
later. A fleet's done (fleet/ending.py) is attested the same way.
"""
from __future__ import annotations

from typing import Any, Callable

from nightshift.supervisor.run.paths import RunPaths


def attest_done(sup) -> None:
    """``sup``: the shift loop (shift.loop.Supervisor)."""
    shift = sup.state["shift"] or None
    attest_at_done(sup.run_paths, lambda kind, **data: sup.emit(kind, shift, **data), sup.say,
                   first=sup.session.settle)  # a batch turn's job ends just after its agent: its node first


def attest_at_done(run: RunPaths, emit: Callable[..., Any], say: Callable[[str], Any],
                   first: Callable[[], Any] | None = None) -> None:
    """Attest the run's last verdict; ``emit(kind, **data)`` records the outcome, ``say`` tells it."""
    try:
        if first is not None:
            first()
        from nightshift.supervisor.attest.write import attest_verdict
        done = attest_verdict(run.root, None, at_done=True)
    except Exception as exc:  # noqa: BLE001 - the run is verified done whatever happens to its attestation
        emit("attest.failed", error=f"{type(exc).__name__}: {exc}"[:500])
        say(f"attestation not written: {exc}; `nightshift attest {run.run_id}` writes it")
        return
    emit("attest.written", verdict=done.verdict, path=str(done.path), sha256=done.sha256,
         signed=done.fingerprint is not None, fingerprint=done.fingerprint, note=done.noted,
         problems=done.problems[:5])
    for line in done.lines():
        say(line)
