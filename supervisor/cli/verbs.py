"""The bodies of the run-management verbs: run, resume, log, pause, stop, nudge, attach, claim, and the
internal `supervise` (`init` is in init/verb.py, `status` in watch/status.py, `ls` and `forget` in watch/registry.py)."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.registry import find_run


def cmd_run(args) -> int:
    from nightshift.supervisor.shift.launcher import create_run, resolve_config, start_detached

    ws = Path(args.dir).resolve()
    if not ws.is_dir():
        raise UserError(f"workspace {ws} does not exist; give an existing folder")
    config = resolve_config(ws, backend=args.backend, agent=args.agent)
    from nightshift.supervisor.fleet.launch import create_fleet, is_fleet, refuse_fleet_now, start_note, with_lanes
    from nightshift.supervisor.shift.workspace_lock import launch_lock
    config = with_lanes(config, getattr(args, "lanes", None))
    if args.no_check:  # the preflight's config line says it otherwise
        from nightshift.supervisor.config.oracle import deprecation_notes
        print("".join(f"note: {n}\n" for n in deprecation_notes(config.oracle)), end="")
    with launch_lock(ws):  # two `run` at once: the second waits, then finds the first live (one line, no orphan)
        fleet_id = refuse_fleet_now(ws, config) if is_fleet(config) else None  # before the preflight runs anything
        found = None
        if not args.no_check:
            from nightshift.supervisor.cli.preflight.check import preflight_for_start
            from nightshift.supervisor.shift.launcher import refuse_to_start
            refuse_to_start(ws, config)  # a run that cannot start here is one line, before the preflight runs anything
            found = preflight_for_start(ws, backend=args.backend, agent=args.agent)
        run = create_fleet(ws, config, fleet_id) if is_fleet(config) else create_run(ws, config)
        lanes = f" ({config.fleet.lanes} lanes){start_note(ws, config)}" if is_fleet(config) else ""
        print(f"run {run.run_id} created in {run.root}{lanes}")
        from nightshift.supervisor.sandbox.tier import tier_for
        tier = tier_for(config.policy.sandbox)
        if tier.name != "full":  # said before the first turn starts, with its cause's fix
            print(f"boundary: {tier.label()}, weaker than full: {tier.why}")
        from nightshift.supervisor.run.events import read_events
        kept_off = next((e["data"].get("not_run") or [] for e in read_events(run.events).events
                         if e["type"] == "git.guarded"), [])  # what the run's creation found: not asked twice
        if kept_off:  # the user's own programs: said once, so a commit without its hook is no surprise
            print(f"git: nightshift will not run your {', '.join(kept_off)} while it commits; the agent cannot "
                  "change .git's config, hooks or info/")
        from nightshift.supervisor.cli.preflight.check import record_preflight
        record_preflight(run, found)
        if not args.foreground:
            where = start_detached(run, config)  # returns once the supervisor holds the workspace
    if args.foreground:
        from nightshift.supervisor.fleet.launch import supervise_any
        return _foreground_outcome(run, supervise_any(run, leave_on_outcome=True))
    print(f"supervisor: {where}\nwatch: nightshift log -f {run.run_id}   |   nightshift tui"
          f"   |   nightshift attach {run.run_id}")
    return 0


def cmd_resume(args) -> int:
    from nightshift.supervisor.run.inbox import send_command
    from nightshift.supervisor.shift.launcher import start_detached
    from nightshift.supervisor.run.liveness import supervisor_status
    from nightshift.supervisor.run.state import load_state

    if args.dead or not args.run:
        if not args.dead or args.run or args.foreground:
            raise UserError("give a run to resume (`nightshift resume RUN`), or --dead alone for every run whose "
                            "supervisor died")
        from nightshift.supervisor.cli.watch.revive import resume_dead
        return resume_dead()
    run = find_run(args.run)
    state, _, _ = load_state(run.root)
    if state["phase"] == "finished":
        raise UserError(f"run {run.run_id} has finished ({state['outcome']}); start a new one with `nightshift run`")
    if supervisor_status(run.supervisor)["alive"]:
        if not state["paused"]:
            print(f"run {run.run_id} is running and not paused; nothing to do")
            return 0
        return _report_ack(run, *send_command(run, "resume"), verb="resume")
    if state["paused"]:  # a dead supervisor of a paused run: the new one starts unpaused
        from nightshift.supervisor.run.events import EventLog
        from nightshift.supervisor.run.state import write_snapshot
        log = EventLog(run.events, last_seq=state["seq"])
        log.append("run.resumed", state["shift"] or None, by="user", reset_breaker=True)
        log.close()
        state, offset, _ = load_state(run.root)
        write_snapshot(run.snapshot, state, offset)
    if args.foreground:
        from nightshift.supervisor.fleet.launch import supervise_any
        return _foreground_outcome(run, supervise_any(run, leave_on_outcome=True))
    print(f"run {run.run_id}: supervisor restarted in {start_detached(run)}")
    return 0


def _foreground_outcome(run, _status: int) -> int:
    """`run --foreground` exits like `nightshift wait`: 0 only when verified done (codes in README)."""
    from nightshift.supervisor.cli.watch.outcome import FAILED, MEANING, outcome_code
    from nightshift.supervisor.run.state import load_state

    code = outcome_code(load_state(run.root)[0])
    code = FAILED if code is None else code
    print(f"run {run.run_id}: {MEANING[code]} (exit {code})")
    return code


def _report_ack(run, cmd_id: str, offset: int, verb: str) -> int:
    from nightshift.supervisor.run.inbox import wait_ack
    from nightshift.supervisor.run.liveness import supervisor_status

    event = wait_ack(run, cmd_id, offset, timeout=float(os.environ.get("NIGHTSHIFT_ACK_TIMEOUT", "10")))
    if event is None:
        alive = supervisor_status(run.supervisor)["alive"]
        hint = "the supervisor is busy; it will act on it at its next step" if alive else \
            f"its supervisor is not running; `nightshift resume {run.run_id}` starts it"
        print(f"nightshift: {verb} queued for run {run.run_id} but not yet acknowledged ({hint})", file=sys.stderr)
        return 3
    if event["type"] == "command.rejected":
        print(f"nightshift: {verb} rejected by run {run.run_id}: {event['data'].get('reason')}", file=sys.stderr)
        return 1
    print(f"{verb}: accepted by run {run.run_id}")
    return 0


def _command(verb: str):
    def handler(args) -> int:
        from nightshift.supervisor.run.inbox import send_command
        from nightshift.supervisor.run.state import load_state

        run = find_run(args.run)
        if load_state(run.root)[0]["phase"] == "finished":
            raise UserError(f"run {run.run_id} has already finished")
        extra = {"message": args.message} if verb == "nudge" else {}
        return _report_ack(run, *send_command(run, verb, **extra), verb=verb)
    return handler


cmd_pause, cmd_nudge = _command("pause"), _command("nudge")
cmd_approve, cmd_deny = _command("approve"), _command("deny")


def cmd_stop(args) -> int:
    """Stop a run (supervisor/cli/watch/stop.py, the TUI's stop key too): a submitted run's queued jobs first."""
    from nightshift.supervisor.cli.watch.stop import stop_run

    run = find_run(args.run)
    stopped = stop_run(run, wait=float(os.environ.get("NIGHTSHIFT_ACK_TIMEOUT", "10")))
    for line in stopped.lines[:-1]:
        print(line)
    last = stopped.lines[-1]
    if stopped.accepted:
        print(last)
        return 0
    print(f"nightshift: {last}", file=sys.stderr)
    return 1 if stopped.accepted is False else 3


def cmd_log(args) -> int:
    from nightshift.supervisor.cli.watch.heldout import log_lines
    from nightshift.supervisor.run.events import read_events
    from nightshift.supervisor.run.story import describe

    run = find_run(args.run)
    offset = 0
    while True:
        result = read_events(run.events, offset)
        offset = result.offset
        for event in result.events:
            line = json.dumps(event) if args.raw else describe(event)
            if line:
                print(line if args.raw else f"{event['ts'][11:19]}  {line}", flush=True)
            if line and not args.raw:  # the user's own view: held-out figures in full, from the private store
                for full in log_lines(run.root, event):
                    print(f"          {full}", flush=True)
        if not args.follow or any(e["type"] == "run.finished" for e in result.events):
            return 0
        time.sleep(0.3)


def cmd_attach(args) -> int:
    from nightshift.supervisor.cli.watch.attach import attach_argv

    run = find_run(args.run)
    argv = attach_argv(run)
    if not argv:
        raise UserError(f"run {run.run_id} has no agent pane to attach to right now (see `nightshift status`)")
    os.execvp(argv[0], argv)


def cmd_claim(args) -> int:
    from nightshift.supervisor.shift.turns import write_claim

    run_dir, shift, token = (os.environ.get(k) for k in ("NIGHTSHIFT_RUN_DIR", "NIGHTSHIFT_SHIFT", "NIGHTSHIFT_TOKEN"))
    if not (run_dir and shift and token):
        raise UserError("`nightshift claim` works only inside a nightshift shift (NIGHTSHIFT_RUN_DIR is not set)")
    if not shift.isdigit():
        raise UserError(f"NIGHTSHIFT_SHIFT={shift!r} is not a shift number; `nightshift claim` works only inside "
                        f"a shift nightshift started")
    if not (Path(run_dir) / "events.jsonl").is_file():
        raise UserError(f"NIGHTSHIFT_RUN_DIR={run_dir} is not a nightshift run directory; nothing was recorded")
    write_claim(Path(run_dir), int(shift), token, args.status, args.summary)
    print(f"nightshift: claim '{args.status}' recorded; it will be checked when you stop")
    return 0


def cmd_supervise(args) -> int:
    from nightshift.supervisor.run.paths import RunPaths

    run = RunPaths(Path(args.run_dir))
    log = open(run.supervisor_log, "a", buffering=1)
    os.chmod(run.supervisor_log, 0o600)

    def say(line: str) -> None:
        stamped = f"{time.strftime('%H:%M:%S')}  {line}"
        print(stamped, flush=True)
        log.write(stamped + "\n")
    try:
        from nightshift.supervisor.fleet.launch import supervise_any
        from nightshift.hpc.chain import has_chain
        from nightshift.supervisor.fleet.lanes import is_lane
        # Detached, it ends at a budget's or breaker's hold, unless something else restarts it there (a Slurm
        # chain's next job, the fleet of a lane): README "a run held by its budget or breaker has no supervisor".
        return supervise_any(run, say=say, let_go_when_held=not has_chain(run) and not is_lane(run.workspace))
    except Exception as exc:
        from nightshift.supervisor.errors import UserError, is_user_error
        if getattr(exc, "nightshift_recorded", False):
            # Recorded by the loop (event, last word, notification): the whole trace goes to the log for whoever
            # debugs it, the terminal gets the one line the user acts on.
            import traceback
            try:
                log.write("".join(traceback.format_exception(exc)))
                log.flush()
            except OSError:
                pass
            from nightshift.supervisor.shift.crash import reason
            raise UserError(f"supervisor crashed: {reason(exc, run.run_id)}") from None
        say(f"supervisor stopped: {exc}" if is_user_error(exc) else f"supervisor crashed: {exc!r}")
        raise
