"""The test ratchet's two moments in a supervisor's life: its start (the starting set taken before the first turn,
when the preflight did not take it, and the files of every test collected then, failing or passing, kept from then
on) and a person's release of tests
from it (`nightshift release`, through the inbox: the agent's namespace cannot write there).
"""
from __future__ import annotations

from typing import Any

from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.verify.boundary import forget, protected_at_start, remember, test_files


def start_ratchet(run: RunPaths, config: Config, state: dict[str, Any], emit, say=print) -> str | None:
    """Take the starting set (once: a restart finds it in the state) and keep the files of its tests and the
    configuration that selects them, with nightshift.toml and [policy] protect, as they are now. Returns why the
    run must not start (the suite does not collect), as one line; None when it may."""
    ws = run.workspace
    if config.verify.test_command.strip() and state.get("ratchet") is None:
        from nightshift.supervisor.sandbox.boundary import boundary_for
        from nightshift.supervisor.verify import verdict_tree
        from nightshift.supervisor.verify.baseline import take_baseline

        out_dir = run.root / "baseline"
        out_dir.mkdir(mode=0o700, exist_ok=True)
        try:  # in the verdicts' own tree (verify/verdict_tree.py): the starting set is what a verdict would see
            tree, boundary = verdict_tree.prepare(ws, run.root, boundary_for(ws, config, run.root))
        except (verdict_tree.TreeProblem, OSError) as exc:
            return f"the verdicts' clean checkout of the candidate cannot be made ({exc})"
        baseline = take_baseline(config.verify.test_command, tree.path, config.verify.timeout, out_dir,
                                 config.verify.junit, "start", boundary)
        if baseline.problem:
            return baseline.problem
        emit("tests.baseline", None, **baseline)
        say(f"tests: {baseline.describe()}")
    remember(run.root / "protected", ws, protected_at_start(ws, config.policy.protect) | test_files(ws, held(state)))
    return None


def kept(state: dict[str, Any], recorded: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The ratchet's set: what passed at the start and at any verdict since (``recorded``), less what a person
    released (released stays released for the rest of the run)."""
    ratchet = state.get("ratchet") or {}
    return (set(ratchet.get("passing") or []) | set(recorded)) - set(ratchet.get("released") or {})


def goal(state: dict[str, Any]) -> set[str]:
    """The goal's tests: those that failed when the run began, less what a person released. They need not pass at
    every stop (the run is to make them pass), but they are the user's: kept unchanged, never deselected."""
    ratchet = state.get("ratchet") or {}
    return set(ratchet.get("goal") or []) - set(ratchet.get("released") or {})


def held(state: dict[str, Any], recorded: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Every test whose file (and the configuration that selects it) is kept from the first turn: each test
    collected when the run began, failing or passing, and each that passed since, less what a person released."""
    ratchet = state.get("ratchet") or {}
    return kept(state, recorded) | (set(ratchet.get("collected") or []) - set(ratchet.get("released") or {}))


def at_start(state: dict[str, Any]) -> set[str]:
    ratchet = state.get("ratchet") or {}
    return set(ratchet.get("passing") or []) - set(ratchet.get("released") or {})


def named_tests(wanted: str, ids: set[str]) -> list[str]:
    """The tests a person named: one node id, or a file (every test of the set in it)."""
    wanted = wanted.strip().removeprefix("./")
    if wanted in ids:
        return [wanted]
    return sorted(t for t in ids if t.split("::", 1)[0] == wanted.rstrip("/") or t.startswith(wanted.rstrip("/") + "/"))


def release(sup, command: dict[str, Any]) -> None:
    """A person's `nightshift release`: the tests leave the set (an event), files that hold no kept test any more
    are no longer kept, and the agent's rules are compiled again. ``sup`` is the shift loop."""
    args, cid, shift = command.get("args") or {}, command.get("id"), sup.state["shift"] or None
    why, wanted = str(args.get("why") or "").strip(), str(args.get("test") or "")
    ids = held(sup.state, sup.ledger.recorded_tests())
    tests = named_tests(wanted, ids)
    if not why or not tests:
        reason = "say why (--why)" if not why else f"the ratchet holds no test {wanted!r}"
        sup.emit("command.rejected", shift, id=cid, verb="release", reason=reason)
        return
    ws = sup.run_paths.workspace
    still = test_files(ws, ids - set(tests))
    files = forget(sup.run_paths.root / "protected", ws,
                   test_files(ws, set(tests)) - still - protected_at_start(ws, sup.config.policy.protect))
    sup.emit("command.accepted", shift, id=cid, verb="release")
    sup.emit("test.released", shift, tests=tests, why=why, by=str(args.get("by") or "user"), files=files)
    sup.say(f"released from the ratchet by {args.get('by') or 'the user'}: {', '.join(tests[:5])}"
            f"{' ...' if len(tests) > 5 else ''} ({why})")
    sup.session.refresh_policy()
