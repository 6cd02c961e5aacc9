"""`nightshift init`: ask what cannot be found (at a terminal), survey the references, write the workspace's files.
Unattended (--yes, or no terminal) it takes what was found; a question nobody can answer is a one-line error.
"""
from __future__ import annotations

import sys
from pathlib import Path

from nightshift.supervisor.cli.progress import step
from nightshift.supervisor.errors import UserError


def cmd_init(args) -> int:
    from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace, survey_for
    from nightshift.supervisor.cli.init.references import describe

    ws = Path(args.dir)
    # --trust's question first, before anything is written: an input that ends unanswered (no terminal, stdin
    # closed) is one line naming --yes; an answer piped in (`echo y | nightshift init --trust`) is taken.
    trust = args.trust and (args.yes or _ask(f"Record Claude Code workspace trust for {ws.resolve()} in your Claude "
                                             "config? [y/N] ", TRUST_FIX).strip().lower() in ("y", "yes"))
    if args.trust and (ws / "nightshift.toml").exists() and not args.force:  # a workspace already: trust only
        return _record_trust(ws, trust)
    asking = sys.stdin.isatty() and sys.stdout.isatty() and not args.yes  # with --yes or no terminal: unattended
    goal = args.goal
    if asking and not goal:
        goal = _ask("The goal (what must be true, measured how, e.g. 'agree with CLASS to 0.1%'): ").strip()
    opts = InitOptions(goal=goal, test_command=args.test_command, verify_commands=args.verify_commands,
                       reference_dir=args.reference_dir, candidate_dir=args.candidate_dir, agent=args.agent,
                       force=args.force, holdout=args.holdout or "",
                       holdout_tests=list(getattr(args, "holdout_tests", None) or []))
    if args.reference_dir and ws.resolve().is_dir():
        with step(f"init: reading the references in {args.reference_dir}/"):  # large ones take a while
            opts.survey = survey_for(ws.resolve(), opts)
        print(f"nightshift: in {args.reference_dir}/ found:")
        print("\n".join(describe(opts.survey)))
        if asking and _ask("Write nightshift.toml with these comparisons? [Y/n] ").strip().lower() in ("n", "no"):
            print("nightshift: nothing written")
            return 1
    _offer_heldout_tests(opts, asking)
    with step("init: writing the workspace" + (" (hashing the references, moving what is held out)"
                                                if args.reference_dir or opts.holdout_tests else "")):
        written = init_workspace(ws, opts)
    print(f"nightshift: wrote {', '.join(written)} in {ws.resolve()}")
    for rel, dest in opts.moves.items():
        print(f"nightshift: held out {rel}: moved to {dest} (hidden from every process of the agent)")
    if opts.holdout_tests:
        from nightshift.supervisor.cli.init.holdout_tests import store_for
        print(f"nightshift: held out tests ({', '.join(opts.holdout_tests)}): moved to {store_for(ws)}/files "
              "(hidden from every process of the agent; run over the candidate at a claim of done)")
    for note in opts.notes:
        print(f"nightshift: note: {note}")
    print(f"nightshift: {opts.judge.summary()}")
    from nightshift.supervisor.cli.init.signing_key import offer_signing_key
    offer_signing_key(getattr(args, "new_key", False), asking, _ask, lambda line: print(f"nightshift: {line}"))
    _record_trust(ws, trust)
    print("next: set [oracle] command in nightshift.toml and the plan in CLAUDE.md, then `nightshift check` "
          "and `nightshift run`")
    return 0


def _offer_heldout_tests(opts, asking: bool) -> None:
    """A goal stated as tests with no references and none held out: say what such a run cannot catch, and offer
    to hold some out (a person at a terminal; unattended, the note says how)."""
    from nightshift.supervisor.cli.init.holdout_tests import UNCAUGHT
    if not opts.test_command or opts.reference_dir or opts.holdout_tests:
        return
    print(f"nightshift: note: {UNCAUGHT}")
    if asking:
        answer = _ask("Hold out some tests now? A file, a folder, FILE::TEST or -k EXPR (Enter: none): ").strip()
        if answer:
            opts.holdout_tests = [answer]


def _ask(question: str, fix: str = "answer at a terminal, or give --yes (and --goal) to take what was found") -> str:
    """input(), with an input that ends (Ctrl-D, a closed stdin, no terminal) as one line naming the fix."""
    try:
        return input(question)
    except EOFError:
        raise UserError(f"init: the input ended before an answer to {question.split('?')[0].strip()!r}; "
                        f"{fix}") from None


TRUST_FIX = "add --yes to record it (init --trust --yes), or leave out --trust"


def _record_trust(ws: Path, trust: bool) -> int:
    """Record Claude Code's workspace trust for ``ws`` when the person said yes (or gave --yes)."""
    if trust:
        from nightshift.supervisor.agents.claude import trust_workspace
        print(f"nightshift: {trust_workspace(ws.resolve())}")
    return 0
