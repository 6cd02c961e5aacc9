"""The `nightshift` command: verbs only. Each verb's body is imported when it runs, so the Stop hook
(`nightshift hook stop`, run at every stop of the agent) starts fast. Errors a user can act on are printed as
one line, `nightshift: ...`, with a non-zero exit and no traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nightshift", description="Keep a coding agent working on a measurable goal, "
                                "and check its claims. With no verb: the TUI.")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    s = sub.add_parser("init", help="make a folder a nightshift workspace")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--goal", default="")
    s.add_argument("--test-command", default="")
    s.add_argument("--verify-command", action="append", default=[], dest="verify_commands")
    s.add_argument("--reference-dir", default="")
    s.add_argument("--agent", choices=["claude", "command", "demo"], default="claude")
    s.add_argument("--force", action="store_true", help="overwrite existing files")
    s.add_argument("--trust", action="store_true", help="record Claude Code workspace trust (asks first)")

    s = sub.add_parser("run", help="start a run in a workspace (detached unless --foreground)")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--foreground", action="store_true")
    s.add_argument("--backend", choices=["tmux", "local", "slurm"])
    s.add_argument("--agent", choices=["claude", "command", "demo"])

    s = sub.add_parser("resume", help="continue a paused run, or one whose supervisor is gone")
    s.add_argument("run")
    s.add_argument("--foreground", action="store_true")

    sub.add_parser("ls", help="list your runs")
    s = sub.add_parser("status", help="where a run stands")
    s.add_argument("run", nargs="?")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("log", help="a run's story, from its events")
    s.add_argument("run", nargs="?")
    s.add_argument("-f", "--follow", action="store_true")
    s.add_argument("--raw", action="store_true", help="the events as JSON lines")
    for verb, text in (("pause", "hold the run after the agent's current turn"), ("stop", "end the run")):
        s = sub.add_parser(verb, help=text)
        s.add_argument("run")
    s = sub.add_parser("nudge", help="a message for the agent, delivered into its context")
    s.add_argument("run")
    s.add_argument("message")
    s = sub.add_parser("attach", help="attach this terminal to the agent's pane")
    s.add_argument("run", nargs="?")

    s = sub.add_parser("claim", help="(for the agent) claim the goal is met, or that you are blocked")
    s.add_argument("status", choices=["done", "blocked"])
    s.add_argument("--summary", required=True)

    s = sub.add_parser("demo", help="a scripted, offline demo run (no model, no network)")
    s.add_argument("--headless", action="store_true", help="no screen; exit 0 only if verified done")
    s.add_argument("--dir", help="build the demo workspace here and keep it")

    s = sub.add_parser("compare", help="run the oracle on this workspace and print the comparison")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--json", action="store_true")
    s.add_argument("--fast", action="store_true", help="the fast oracle instead of the full one")
    s = sub.add_parser("plot", help="PNG of the worst error per comparison across verdicts")
    s.add_argument("run")
    s.add_argument("-o", "--output")

    s = sub.add_parser("hook", help="(for the agent's hooks) e.g. `nightshift hook stop`")
    s.add_argument("event", choices=["stop"])
    s = sub.add_parser("doctor", help="check what nightshift needs on this machine")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--slurm", action="store_true", help="also submit a tiny job and check the job's environment")
    s = sub.add_parser("tui", help="the terminal UI (the default with no verb)")
    s.add_argument("run", nargs="?", help="open this run directly")
    s = sub.add_parser("submit", help="the whole run as a self-continuing Slurm batch job")
    s.add_argument("dir", nargs="?", default=".")
    s = sub.add_parser("supervise", help=argparse.SUPPRESS)
    s.add_argument("run_dir")
    return p


def dispatch(args: argparse.Namespace) -> int:
    verb = args.verb
    if verb == "hook":
        from supervisor.shift.hook import main as hook_main
        return hook_main([args.event])
    if verb in (None, "tui"):
        from supervisor.cli.tui_seams import face_seams
        from tui.app import main as tui_main
        return tui_main([args.run] if getattr(args, "run", None) else [], seams=face_seams())
    if verb == "demo":
        from supervisor.cli.demo import demo_main
        return demo_main(headless=args.headless, keep_dir=args.dir)
    if verb == "compare":
        from supervisor.cli.oracle_verbs import compare_main
        return compare_main(Path(args.dir), as_json=args.json, full=not args.fast)
    if verb == "plot":
        from supervisor.cli.oracle_verbs import plot_main
        from supervisor.run.registry import find_run
        return plot_main(find_run(args.run).root, Path(args.output) if args.output else None)
    if verb == "doctor":
        from supervisor.cli.doctor import doctor_main
        return doctor_main(Path(args.dir), slurm=args.slurm)
    if verb == "submit":
        from hpc.submit import submit_main
        return submit_main(Path(args.dir))
    from supervisor.cli import verbs as cli_verbs
    return getattr(cli_verbs, f"cmd_{verb}")(args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["hook", "stop"]:  # the hot path, at every stop of the agent: no parser, no other imports
        from supervisor.shift.hook import main as hook_main
        return hook_main(["stop"])
    args = build_parser().parse_args(argv)
    from hpc.wiring import register as add_slurm
    add_slurm()  # the composition root: the core reaches Slurm only through what is registered here
    try:
        return dispatch(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a known user-facing error prints as one line, anything else re-raises
        from supervisor.errors import is_user_error
        if not is_user_error(exc):
            raise
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
