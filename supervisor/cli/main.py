"""The `nightshift` command: verbs only. Each verb's body is imported when it runs, so the Stop hook
(`nightshift hook stop`, run at every stop of the agent) starts fast. Errors a user can act on are printed as
one line, `nightshift: ...`, with a non-zero exit and no traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


FULL_SCREEN = {None, "tui", "attach"}  # verbs that hand the terminal to a screen of their own
HOOKS = {"stop": "supervisor.shift.hook", "pretool": "supervisor.shift.pretool", "permission": "supervisor.shift.waits"}


def run_hook(event: str) -> int:
    """Claude Code's hooks (the settings call the modules directly with `python -S`; this is the same entry)."""
    from importlib import import_module
    return import_module(HOOKS[event]).main([event])


def build_parser() -> argparse.ArgumentParser:
    from supervisor.config.doors import DOORS  # a leaf: no pydantic

    p = argparse.ArgumentParser(prog="nightshift", description="Keep a coding agent working on a measurable goal, "
                                "and check its claims. With no verb: the TUI.")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    s = sub.add_parser("init", help="make a folder a nightshift workspace")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--goal", default="")
    s.add_argument("--test-command", default="")
    s.add_argument("--verify-command", action="append", default=[], dest="verify_commands")
    s.add_argument("--reference-dir", default="", help="the reference outputs: one comparison per data set")
    s.add_argument("--candidate-dir", default="out", help="where the oracle command writes the candidates")
    s.add_argument("--holdout", metavar="NAME|N", help="hold out these data sets (names, comma-separated) or N of "
                   "them: moved out of the workspace; the agent learns only pass or a coarse band at a claim")
    s.add_argument("--holdout-tests", nargs="+", default=[], metavar="SELECTION",
                   help="hold out these tests (a file, a folder, FILE::TEST or \"-k EXPR\"): moved out of the "
                   "workspace; run over the candidate at a claim of done, the agent learns pass or a coarse band")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask; write what was found")
    s.add_argument("--agent", choices=["claude", "command", "demo"], default="claude")
    s.add_argument("--force", action="store_true", help="overwrite existing files")
    s.add_argument("--trust", action="store_true", help="record Claude Code workspace trust (asks first)")

    s = sub.add_parser("run", help="start a run in a workspace (detached unless --foreground)")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--foreground", action="store_true")
    s.add_argument("--backend", choices=["tmux", "local", "slurm"])
    s.add_argument("--agent", choices=["claude", "command", "demo"])
    s.add_argument("--no-check", action="store_true", help="skip the preflight (the run's log says so)")
    s.add_argument("--lanes", type=int, help="several agents on the goal, each in its own worktree ([fleet] lanes)")

    s = sub.add_parser("check", help="the preflight: what would make a run fail, each with its fix")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--agent-turn", action="store_true", help="also run one short real turn of the agent")
    s.add_argument("--job", action="store_true", help="Slurm: also run the tiny environment job")

    s = sub.add_parser("resume", help="continue a paused run, or one whose supervisor is gone")
    s.add_argument("run", nargs="?")
    s.add_argument("--foreground", action="store_true")
    s.add_argument("--dead", action="store_true", help="every run of yours on this host whose supervisor died "
                                                       "(and that no person paused or stopped)")
    s = sub.add_parser("watchdog", help="a crontab line (or systemd user timer) that resumes runs whose supervisor "
                                        "died")
    s.add_argument("action", choices=["install", "remove", "uninstall", "status"])
    s.add_argument("--every", type=int, default=5, help="minutes between checks (install)")
    s.add_argument("--systemd", action="store_true", help="a systemd user service and timer instead of cron")

    s = sub.add_parser("ls", help="list your runs")
    s.add_argument("--prune", action="store_true", help="drop runs whose folder is gone from the list (asks first)")
    s.add_argument("-y", "--yes", action="store_true", help="with --prune: do not ask (scripts)")
    s = sub.add_parser("forget", help="drop a run whose folder is gone from your list of runs")
    s.add_argument("run")
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
    for verb, text in (("approve", "answer yes to what the agent waits for (a permission prompt)"),
                       ("deny", "answer no to what the agent waits for; it goes on without it")):
        s = sub.add_parser(verb, help=text)
        s.add_argument("run")
    s = sub.add_parser("release", help="let a test go from a run's test ratchet (renamed, split, replaced)")
    s.add_argument("run")
    s.add_argument("test", help="a test id as the verdicts name it (tests/test_io.py::test_roundtrip), or a file")
    s.add_argument("--why", required=True, help="why it may go; recorded and shown in the report")
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
    s.add_argument("--columns", action="store_true", help="a line per column of each table (default: a line per "
                   "comparison, a table by its worst column)")
    s = sub.add_parser("plot", help="PNG of the worst error per comparison across verdicts")
    s.add_argument("run")
    s.add_argument("-o", "--output")

    s = sub.add_parser("report", help="the morning report: one self-contained HTML file and a summary")
    s.add_argument("run", nargs="?", help="run id, or the path of a run directory (e.g. copied from a cluster)")
    s.add_argument("-o", "--output", help="where to write the HTML (default: <run dir>/report.html; for a run with held-out comparisons, beside their private copies, outside the workspace)")
    s.add_argument("--open", action="store_true", help="open it in a browser")
    s = sub.add_parser("attest", help="a signed in-toto attestation of a verdict (written beside the run, git note)")
    s.add_argument("run", nargs="?", help="run id or run directory (default: the newest run)")
    s.add_argument("--verdict", type=int, help="the Nth verdict of the run (default: the last)")
    s.add_argument("--new-key", action="store_true", help="first make an ed25519 signing key for nightshift")
    s.add_argument("--key", metavar="FILE", help="sign with this ed25519 key instead of [attest] key")
    s = sub.add_parser("verify-result", help="check an attestation's signature and digests; --rerun its figures")
    s.add_argument("target", metavar="FILE|COMMIT")
    s.add_argument("--key", metavar="PUB", help="the signer's public key (OpenSSH .pub or PEM)")
    s.add_argument("--rerun", action="store_true", help="run the oracle again on a fresh tree of the commit")
    s.add_argument("--allow-missing", action="append", default=[], metavar="NAME",
                   help="accept that these could not be checked here (comparison names, event-log, signature)")
    s.add_argument("--references", action="append", default=[], metavar="DIR",
                   help="where to look for held-out references by digest")
    s.add_argument("--dir", help="the clone to check against (default: the run's workspace, or here)")
    s.add_argument("--accept-open", action="append", default=[], metavar="DOOR", choices=DOORS,
                   help=f"--rerun where this machine lacks that part of the sandbox ({', '.join(DOORS)})")
    s = sub.add_parser("wait", help="wait for a run's outcome; exit 0 only if verified done (codes: README)")
    s.add_argument("run", nargs="?")
    s.add_argument("--timeout", type=float, help="give up after this many seconds (exit 124)")

    s = sub.add_parser("hook", help="(for the agent's hooks) e.g. `nightshift hook stop`")
    s.add_argument("event", choices=["stop", "pretool", "permission"])
    s = sub.add_parser("doctor", help="check what nightshift needs on this machine")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--slurm", action="store_true", help="also submit a tiny job and check the job's environment")
    s = sub.add_parser("tui", help="the terminal UI (the default with no verb)")
    s.add_argument("run", nargs="?", help="open this run directly")
    s = sub.add_parser("submit", help="the whole run as a self-continuing Slurm batch job")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--no-check", action="store_true", help="skip the preflight (the run's log says so)")
    s.add_argument("--lanes", type=int, help="a fleet: several agents in their own worktrees, inside the jobs")
    s = sub.add_parser("supervise")  # internal: how `run` starts the supervisor; not listed in --help (below)
    s.add_argument("run_dir")
    # argparse lists a sub-command given help=SUPPRESS as "supervise ==SUPPRESS=="; leave it out of the list.
    sub._choices_actions = [a for a in sub._choices_actions if a.dest != "supervise"]
    return p


def dispatch(args: argparse.Namespace) -> int:
    verb = args.verb
    if verb == "hook":
        return run_hook(args.event)
    if verb in (None, "tui"):
        from supervisor.cli.tui_seams import face_seams
        from tui.app import main as tui_main
        return tui_main([args.run] if getattr(args, "run", None) else [], seams=face_seams())
    if verb == "demo":
        from supervisor.cli.demo import demo_main
        return demo_main(headless=args.headless, keep_dir=args.dir)
    if verb == "compare":
        from supervisor.cli.oracle_verbs import compare_main
        return compare_main(Path(args.dir), as_json=args.json, full=not args.fast, columns=args.columns)
    if verb == "plot":
        from supervisor.cli.oracle_verbs import plot_main
        from supervisor.run.registry import find_run
        return plot_main(find_run(args.run).root, Path(args.output) if args.output else None)
    if verb == "report":
        from supervisor.cli.report.verb import report_main, resolve_run_dir
        return report_main(resolve_run_dir(args.run), Path(args.output) if args.output else None, args.open)
    if verb in ("attest", "verify-result"):
        from supervisor.cli import attest_verbs
        if verb == "attest":
            return attest_verbs.attest_main(args.run, args.verdict, args.new_key, args.key)
        return attest_verbs.verify_result_main(args.target, args.key, args.rerun, args.allow_missing,
                                               args.references, args.dir, args.accept_open)
    if verb == "wait":
        from supervisor.cli.watch.outcome import wait_main
        return wait_main(args.run, args.timeout)
    if verb == "watchdog":
        from supervisor.cli.watch.cron import watchdog_main
        return watchdog_main(args.action, args.every, systemd=args.systemd)
    if verb == "doctor":
        from supervisor.cli.doctor import doctor_main
        return doctor_main(Path(args.dir), slurm=args.slurm)
    if verb == "check":
        from supervisor.cli.preflight.check import check_main
        return check_main(Path(args.dir), agent_turn=args.agent_turn, job=args.job)
    if verb == "submit":
        from hpc.submit import submit_main
        from supervisor.cli.preflight.check import preflight_for_start, record_preflight
        from hpc.client import make_client
        from supervisor.config.schema import load_config
        from hpc.submit import submit_config
        make_client(load_config(Path(args.dir)).slurm.client)  # no Slurm: the one-line error, before anything
        from supervisor.fleet.launch import start_note
        config = submit_config(Path(args.dir), lanes=args.lanes)  # a fleet that cannot start: one line, first
        found = None if args.no_check else preflight_for_start(Path(args.dir))
        return submit_main(Path(args.dir), on_created=lambda run: record_preflight(run, found), lanes=args.lanes,
                           note=start_note(Path(args.dir), config))  # after the preflight: it may write files
    if verb in ("ls", "forget"):
        from supervisor.cli.watch import registry as registry_verbs
        return getattr(registry_verbs, f"cmd_{verb}")(args)
    if verb == "status":
        from supervisor.cli.watch.status import cmd_status
        return cmd_status(args)
    if verb == "release":
        from supervisor.cli.release_verb import cmd_release
        return cmd_release(args)
    from supervisor.cli import verbs as cli_verbs
    return getattr(cli_verbs, f"cmd_{verb}")(args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in HOOKS:  # hot paths: no parser, no other imports
        return run_hook(argv[1])
    if argv and argv[0] == "compare":  # run at every stop by the agent: its own small parser, no Slurm wiring
        from supervisor.cli.oracle_verbs import compare_fast
        return _guarded(lambda: compare_fast(argv[1:]))
    args = build_parser().parse_args(argv)
    if args.verb not in FULL_SCREEN:  # every line a verb prints passes plain(): no agent escape sequence acts
        from supervisor.run.shown import ShownStream
        sys.stdout, sys.stderr = ShownStream(sys.stdout), ShownStream(sys.stderr)
    from hpc.wiring import register as add_slurm
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
        from supervisor.errors import is_user_error
        if not is_user_error(exc):
            raise
        print(f"nightshift: {exc}", file=sys.stderr)
        return 2

if __name__ == "__main__":
    sys.exit(main())
