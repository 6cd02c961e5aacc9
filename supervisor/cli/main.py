"""The `nightshift` command: verbs only. Each verb's body is imported when it runs, so the Stop hook
(`nightshift hook stop`, run at every stop of the agent) starts fast. Errors a user can act on are printed as
one line, `nightshift: ...`, with a non-zero exit and no traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nightshift.supervisor.cli.parser import build_parser  # argparse and a leaf: cheap, and tests reach it here


FULL_SCREEN = {None, "tui", "attach"}  # verbs that hand the terminal to a screen of their own
PROGRESS = {"check", "run", "submit", "init", "verify-result"}  # long steps say what they do (cli/progress.py)
HOOKS = {"stop": "nightshift.supervisor.shift.hook", "pretool": "nightshift.supervisor.shift.pretool", "permission": "nightshift.supervisor.shift.waits"}


def run_hook(event: str) -> int:
    """Claude Code's hooks (the settings call the modules directly with `python -S`; this is the same entry)."""
    from importlib import import_module
    return import_module(HOOKS[event]).main([event])


def dispatch(args: argparse.Namespace) -> int:
    verb = args.verb
    if verb == "hook":
        return run_hook(args.event)
    if verb in (None, "tui"):
        from nightshift.supervisor.cli.tui_seams import face_seams
        from nightshift.tui.app import main as tui_main
        return tui_main([args.run] if getattr(args, "run", None) else [], seams=face_seams())
    if verb == "demo":
        from nightshift.supervisor.cli.demo import demo_main
        return demo_main(headless=args.headless, keep_dir=args.dir)
    if verb == "compare":
        from nightshift.supervisor.cli.oracle_verbs import compare_main
        return compare_main(Path(args.dir), as_json=args.json, full=not args.fast, columns=args.columns)
    if verb == "plot":
        from nightshift.supervisor.cli.oracle_verbs import plot_main
        from nightshift.supervisor.run.registry import find_run
        return plot_main(find_run(args.run).root, Path(args.output) if args.output else None)
    if verb == "report":
        from nightshift.supervisor.cli.report.verb import report_main, resolve_run_dir
        return report_main(resolve_run_dir(args.run), Path(args.output) if args.output else None, args.open)
    if verb in ("attest", "verify-result"):
        from nightshift.supervisor.cli import attest_verbs
        if verb == "attest":
            return attest_verbs.attest_main(args.run, args.verdict, args.new_key, args.key)
        return attest_verbs.verify_result_main(args.target, args.key, args.rerun, args.allow_missing,
                                               args.references, args.dir, args.accept_open)
    if verb == "wait":
        from nightshift.supervisor.cli.watch.outcome import wait_main
        return wait_main(args.run, args.timeout)
    if verb == "watchdog":
        from nightshift.supervisor.cli.watch.cron import watchdog_main
        return watchdog_main(args.action, getattr(args, "every", 5), systemd=args.systemd)
    if verb == "init":
        from nightshift.supervisor.cli.init.verb import cmd_init
        return cmd_init(args)
    if verb == "completion":
        from nightshift.supervisor.cli.completion import completion_main
        return completion_main(args.shell)
    if verb == "doctor":
        from nightshift.supervisor.cli.doctor import doctor_main
        return doctor_main(Path(args.dir), slurm=args.slurm)
    if verb == "check":
        from nightshift.supervisor.cli.preflight.check import check_main
        return check_main(Path(args.dir), agent_turn=args.agent_turn, job=args.job)
    if verb == "submit":
        from nightshift.hpc.submit import submit_main
        from nightshift.supervisor.cli.preflight.check import preflight_for_start, record_preflight
        from nightshift.hpc.client import make_client
        from nightshift.supervisor.config.schema import load_config
        from nightshift.hpc.submit import submit_config
        make_client(load_config(Path(args.dir)).slurm.client)  # no Slurm: the one-line error, before anything
        from nightshift.supervisor.fleet.launch import start_note
        config = submit_config(Path(args.dir), lanes=args.lanes)  # a fleet that cannot start: one line, first
        found = None if args.no_check else preflight_for_start(Path(args.dir))
        return submit_main(Path(args.dir), on_created=lambda run: record_preflight(run, found), lanes=args.lanes,
                           note=start_note(Path(args.dir), config))  # after the preflight: it may write files
    if verb in ("ls", "forget"):
        from nightshift.supervisor.cli.watch import registry as registry_verbs
        return getattr(registry_verbs, f"cmd_{verb}")(args)
    if verb == "status":
        from nightshift.supervisor.cli.watch.status import cmd_status
        return cmd_status(args)
    if verb == "release":
        from nightshift.supervisor.cli.release_verb import cmd_release
        return cmd_release(args)
    from nightshift.supervisor.cli import verbs as cli_verbs
    return getattr(cli_verbs, f"cmd_{verb}")(args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in HOOKS:  # hot paths: no parser, no other imports
        return run_hook(argv[1])
    if argv and argv[0] == "compare":  # run at every stop by the agent: its own small parser, no Slurm wiring
        from nightshift.supervisor.cli.oracle_verbs import compare_fast
        return _guarded(lambda: compare_fast(argv[1:]))
    args = build_parser().parse_args(argv)
    if args.version:
        from nightshift.supervisor.version import version_line
        print(version_line())
        return 0
    if args.verb not in FULL_SCREEN:  # every line a verb prints passes plain(): no agent escape sequence acts
        from nightshift.supervisor.run.shown import ShownStream
        sys.stdout, sys.stderr = ShownStream(sys.stdout), ShownStream(sys.stderr)
    if args.verb in PROGRESS:
        from nightshift.supervisor.cli import progress
        progress.enable()
    from nightshift.hpc.wiring import register as add_slurm
    add_slurm()  # the composition root: the core reaches Slurm only through what is registered here
    return _guarded(lambda: dispatch(args))


def _guarded(run) -> int:
    """A verb's body with the endings every verb shares: Ctrl-C, a reader gone early, a user error as one line."""
    try:
        code = run()
        sys.stdout.flush()  # inside the try: a reader gone early (`| head -1`) is met here, not at exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `nightshift status RUN | head -1`: the reader went away. Point stdout at /dev/null so the interpreter's
        # final flush does not fail again, and end like other Unix tools cut short by a pipe.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - a known user-facing error prints as one line, anything else re-raises
        from nightshift.supervisor.errors import is_user_error
        if not is_user_error(exc):
            raise
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2

if __name__ == "__main__":
    sys.exit(main())
