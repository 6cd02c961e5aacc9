"""At every verified done, before the run is finished: the verdict's attestation (supervisor/attest), written beside
the run and kept as a git note on the verified commit, recorded as an ``attest.written`` event. It never stops the
run from finishing: a failure is an ``attest.failed`` event with its reason, and `nightshift attest RUN` writes it
later.
"""
from __future__ import annotations


def attest_done(sup) -> None:
    """``sup``: the shift loop (shift.loop.Supervisor)."""
    shift = sup.state["shift"] or None
    try:
        sup.session.settle()  # a batch turn's job ends just after its agent: its last state (the node) first
        from supervisor.attest.write import attest_verdict
        done = attest_verdict(sup.run_paths.root, None, at_done=True)
    except Exception as exc:  # noqa: BLE001 - the run is verified done whatever happens to its attestation
        sup.emit("attest.failed", shift, error=f"{type(exc).__name__}: {exc}"[:500])
        sup.say(f"attestation not written: {exc}; `nightshift attest {sup.run_paths.run_id}` writes it")
        return
    sup.emit("attest.written", shift, verdict=done.verdict, path=str(done.path), sha256=done.sha256,
             signed=done.fingerprint is not None, fingerprint=done.fingerprint, note=done.noted,
             problems=done.problems[:5])
    for line in done.lines():
        sup.say(line)
