"""The `nightshift` command line: every verb, every option, and the help text of each (a test walks this parser and
fails on an action without help). Verbs whose exit code means something list their codes in their --help.

Imports stay light (argparse, leaves without pydantic): the parser is built at every invocation but the hooks'.
"""
from __future__ import annotations

import argparse

AGENTS = ["claude", "command", "demo"]
COMMON_CODES = ("2 bad input (one line on stderr naming what to fix)", "130 interrupted (Ctrl-C)")


def _codes(*lines: str) -> str:
    """An epilog listing a verb's exit codes, one per line ("CODE meaning"; RawDescriptionHelpFormatter keeps
    the lines)."""
    rows = [line.split(" ", 1) for line in (*lines, *COMMON_CODES)]
    return "exit codes:\n" + "\n".join(f"  {code:<4}{text}" for code, text in rows)


def _outcome_codes() -> str:
    """The codes of `wait` and `run --foreground`, from the one table that defines them (watch/outcome.py)."""
    from nightshift.supervisor.cli.watch.outcome import MEANING, NO_SUPERVISOR, TIMEOUT  # stdlib only: cheap

    lines = [f"{code:<3} {meaning}" for code, meaning in MEANING.items() if code != TIMEOUT]
    lines = [line + (" for 30 s (`nightshift resume RUN`)" if line.startswith(str(NO_SUPERVISOR)) else "")
             for line in lines]
    return _codes(*lines, f"{TIMEOUT} --timeout reached, the run still going")


COMPARE = "run the oracle on this workspace and print the comparison"
COMPARE_CODES = _codes("0 every comparison passes", "1 a comparison fails")


def compare_arguments(s: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """compare's options, here and in its own small parser (oracle_verbs.compare_fast: the agent runs it often)."""
    s.add_argument("dir", nargs="?", default=".", help="the workspace: a git repository (default: this folder)")
    s.add_argument("--json", action="store_true", help="the comparison as JSON (for scripts)")
    s.add_argument("--fast", action="store_true", help="the fast oracle instead of the full one")
    s.add_argument("--columns", action="store_true", help="a line per column of each table (default: a line per "
                   "comparison, a table by its worst column)")
    return s


def build_parser() -> argparse.ArgumentParser:
    from nightshift.supervisor.config.doors import DOORS  # a leaf: no pydantic

    def verb(name: str, text: str, codes: str | None = None, **kw) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, epilog=codes,
                              formatter_class=argparse.RawDescriptionHelpFormatter, **kw)

    p = argparse.ArgumentParser(prog="nightshift", description="Keep a coding agent working on a measurable goal, "
                                "and check its claims. With no verb: the TUI.",
                                epilog="`nightshift VERB --help` says what a verb takes and the exit codes it returns. "
                                "Tab completion: `nightshift completion --help`.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-V", "--version", action="store_true",
                   help="print nightshift's version and the commit it was installed from, and exit")
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    workspace = dict(nargs="?", default=".", help="the workspace: a git repository (default: this folder)")
    run_ref = "a run id (as `nightshift ls` lists it) or a unique prefix of one"
    newest = run_ref + " (default: the newest run of this folder)"

    s = verb("init", "make a folder a nightshift workspace (writes nightshift.toml, CLAUDE.md, CHANGELOG.md)")
    s.add_argument("dir", nargs="?", default=".", help="the folder (default: this one); made a git repository "
                   "when it is not one")
    s.add_argument("--goal", default="", help="the goal in one sentence, e.g. \"agree with CLASS to 0.1%%\" "
                   "(asked when not given and a terminal is there)")
    s.add_argument("--test-command", default="", help="the command that runs the tests, e.g. \"pytest -q\" "
                   "(default: found in the folder)")
    s.add_argument("--verify-command", action="append", default=[], dest="verify_commands", metavar="COMMAND",
                   help="one more command that must pass at every verdict (repeat for several)")
    s.add_argument("--reference-dir", default="", help="the reference outputs: one comparison per data set")
    s.add_argument("--candidate-dir", default="out", help="where the oracle command writes the candidates")
    s.add_argument("--holdout", metavar="NAME|N", help="hold out these data sets (names, comma-separated) or N of "
                   "them: moved out of the workspace; the agent learns only pass or a coarse band at a claim")
    s.add_argument("--holdout-tests", nargs="+", default=[], metavar="SELECTION",
                   help="hold out these tests (a file, a folder, FILE::TEST or \"-k EXPR\"): moved out of the "
                   "workspace; run over the candidate at a claim of done, the agent learns pass or a coarse band")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask: take what was found and answer yes "
                   "(needed when no terminal is there to ask)")
    s.add_argument("--agent", choices=AGENTS, default="claude", help="the agent: Claude Code, any CLI through a "
                   "command template, or the scripted offline demo agent (default: claude)")
    s.add_argument("--force", action="store_true", help="overwrite existing files")
    s.add_argument("--trust", action="store_true", help="record Claude Code workspace trust (asks first)")
    s.add_argument("--new-key", action="store_true", help="make nightshift's ed25519 signing key when there is no key "
                   "to sign attestations with (asked at a terminal; with --yes alone none is made, a note says so)")

    s = verb("run", "start a run in a workspace (detached unless --foreground)",
             _codes("0 the run started (detached); with --foreground, the codes of `nightshift wait --help`",
                    "2 also when the preflight found a problem (no run started; --no-check skips it)"))
    s.add_argument("dir", **workspace)
    s.add_argument("--foreground", action="store_true", help="supervise in this terminal and exit with the run's "
                   "outcome (the exit codes of `nightshift wait`)")
    s.add_argument("--backend", choices=["tmux", "local", "slurm"], help="where the agent runs (default: "
                   "nightshift.toml's [backend] kind)")
    s.add_argument("--agent", choices=AGENTS, help="the agent (default: nightshift.toml's [agent] kind)")
    s.add_argument("--no-check", action="store_true", help="skip the preflight (the run's log says so)")
    s.add_argument("--lanes", type=int, help="several agents on the goal, each in its own worktree ([fleet] lanes)")

    s = verb("check", "the preflight: what would make a run fail, each with its fix",
             _codes("0 a run would start", "1 a problem was found (each is named, with its fix)"))
    s.add_argument("dir", **workspace)
    s.add_argument("--agent-turn", action="store_true", help="also run one short real turn of the agent")
    s.add_argument("--job", action="store_true", help="Slurm: also run the tiny environment job")

    s = verb("resume", "continue a paused run, or one whose supervisor is gone")
    s.add_argument("run", nargs="?", help=newest)
    s.add_argument("--foreground", action="store_true", help="supervise in this terminal (see `run --foreground`)")
    s.add_argument("--dead", action="store_true", help="every run of yours on this host whose supervisor died "
                                                       "(and that no person paused or stopped)")
    _watchdog(verb("watchdog", "a crontab line (or systemd user timer) that resumes runs whose supervisor died"))

    s = verb("ls", "list your runs")
    s.add_argument("--prune", action="store_true", help="drop runs whose folder is gone from the list (asks first)")
    s.add_argument("-y", "--yes", action="store_true", help="with --prune: do not ask (scripts)")
    s = verb("forget", "drop a run whose folder is gone from your list of runs")
    s.add_argument("run", help=run_ref)
    s = verb("status", "where a run stands")
    s.add_argument("run", nargs="?", help=newest)
    s.add_argument("--json", action="store_true", help="the run's state as JSON (for scripts)")
    s = verb("log", "a run's story, from its events")
    s.add_argument("run", nargs="?", help=newest)
    s.add_argument("-f", "--follow", action="store_true", help="keep printing new events as they come")
    s.add_argument("--raw", action="store_true", help="the events as JSON lines")
    for name, text in (("pause", "hold the run after the agent's current turn"), ("stop", "end the run")):
        verb(name, text).add_argument("run", help=run_ref)
    s = verb("nudge", "a message for the agent, delivered into its context")
    s.add_argument("run", help=run_ref)
    s.add_argument("message", help="the message, as one argument (quote it)")
    for name, text in (("approve", "answer yes to what the agent waits for (a permission prompt)"),
                       ("deny", "answer no to what the agent waits for; it goes on without it")):
        verb(name, text).add_argument("run", help=run_ref)
    s = verb("release", "let a test go from a run's test ratchet (renamed, split, replaced)")
    s.add_argument("run", help=run_ref)
    s.add_argument("test", help="a test id as the verdicts name it (tests/test_io.py::test_roundtrip), or a file")
    s.add_argument("--why", required=True, help="why it may go; recorded and shown in the report")
    verb("attach", "attach this terminal to the agent's pane").add_argument("run", nargs="?", help=newest)

    s = verb("claim", "(for the agent) claim the goal is met, or that you are blocked")
    s.add_argument("status", choices=["done", "blocked"], help="done: the goal is met; blocked: you cannot go on")
    s.add_argument("--summary", required=True, help="what was done (or what blocks you), in a sentence or two")

    s = verb("demo", "a scripted, offline demo run (no model, no network)",
             _codes("0 with --headless: the demo run ended verified done", "1 with --headless: it did not"))
    s.add_argument("--headless", action="store_true", help="no screen; exit 0 only if verified done")
    s.add_argument("--dir", help="build the demo workspace here and keep it")

    compare_arguments(verb("compare", COMPARE, COMPARE_CODES))
    s = verb("plot", "PNG of the worst error per comparison across verdicts")
    s.add_argument("run", help=run_ref)
    s.add_argument("-o", "--output", help="the PNG file to write (default: beside the run)")

    s = verb("report", "the morning report: one self-contained HTML file and a summary")
    s.add_argument("run", nargs="?", help="run id, or the path of a run directory (e.g. copied from a cluster)")
    s.add_argument("-o", "--output", help="where to write the HTML (default: <run dir>/report.html; for a run with "
                   "held-out comparisons, beside their private copies, outside the workspace)")
    s.add_argument("--open", action="store_true", help="open it in a browser")
    s = verb("attest", "a signed in-toto attestation of a verdict (written beside the run, git note)")
    s.add_argument("run", nargs="?", help="run id or run directory (default: the newest run)")
    s.add_argument("--verdict", type=int, help="the Nth verdict of the run (default: the last)")
    s.add_argument("--new-key", action="store_true", help="first make an ed25519 signing key for nightshift")
    s.add_argument("--key", metavar="FILE", help="sign with this ed25519 key instead of [attest] key")
    s = verb("verify-result", "check an attestation's signature and digests; --rerun its figures",
             _codes("0 the attested verdict passed and everything named holds", "1 otherwise (each mismatch is a "
                    "line)", "3 unsigned: everything checked holds, but no key signed it (what that proves and what "
                    "not is said; --allow-missing signature accepts it: 0)"))
    s.add_argument("target", metavar="FILE|COMMIT", help="an attestation file, or a commit whose git note holds one")
    s.add_argument("--key", metavar="PUB", help="the signer's public key (OpenSSH .pub or PEM)")
    s.add_argument("--rerun", action="store_true", help="run the oracle again on a fresh tree of the commit")
    s.add_argument("--allow-missing", action="append", default=[], metavar="NAME",
                   help="accept that these could not be checked here (comparison names, event-log, signature)")
    s.add_argument("--references", action="append", default=[], metavar="DIR",
                   help="where to look for held-out references by digest")
    s.add_argument("--dir", help="the clone to check against (default: the run's workspace, or here)")
    s.add_argument("--accept-open", action="append", default=[], metavar="DOOR", choices=DOORS,
                   help=f"--rerun where this machine lacks that part of the sandbox ({', '.join(DOORS)})")
    s = verb("wait", "wait for a run's outcome; exit 0 only if verified done", _outcome_codes())
    s.add_argument("run", nargs="?", help=newest)
    s.add_argument("--timeout", type=float, help="give up after this many seconds (exit 124)")

    s = verb("hook", "(for the agent's hooks) e.g. `nightshift hook stop`")
    s.add_argument("event", choices=["stop", "pretool", "permission"], help="the Claude Code hook event")
    s = verb("doctor", "check what nightshift needs on this machine",
             _codes("0 everything needed is there", "1 something is missing (named, with how to get it)"))
    s.add_argument("dir", **workspace)
    s.add_argument("--slurm", action="store_true", help="also submit a tiny job and check the job's environment")
    verb("tui", "the terminal UI (the default with no verb)").add_argument("run", nargs="?",
                                                                          help="open this run directly")
    s = verb("submit", "the whole run as a self-continuing Slurm batch job")
    s.add_argument("dir", **workspace)
    s.add_argument("--no-check", action="store_true", help="skip the preflight (the run's log says so)")
    s.add_argument("--lanes", type=int, help="a fleet: several agents in their own worktrees, inside the jobs")
    s = verb("completion", "print a shell completion script: `source <(nightshift completion bash)` in ~/.bashrc, "
                           "or `nightshift completion zsh > ~/.zfunc/_nightshift` for zsh")
    s.add_argument("shell", choices=["bash", "zsh"], help="the shell the script is for")
    s = sub.add_parser("supervise", help="(internal) how `run` starts the supervisor")
    s.add_argument("run_dir", help="the run directory to supervise")
    # argparse lists a sub-command given help=SUPPRESS as "supervise ==SUPPRESS=="; leave it out of the list.
    sub._choices_actions = [a for a in sub._choices_actions if a.dest != "supervise"]
    return p


def _watchdog(s: argparse.ArgumentParser) -> None:
    """`watchdog install|remove|uninstall|status`: each its own sub-command, so `watchdog install --help` is its own."""
    actions = s.add_subparsers(dest="action", metavar="ACTION", required=True)
    systemd = dict(action="store_true", help="a systemd user service and timer instead of cron")
    a = actions.add_parser("install", help="add the crontab line (or systemd timer) that runs `nightshift resume "
                           "--dead`", description="add one line to your crontab that runs `nightshift resume --dead` "
                           "every few minutes (replacing an earlier one of ours)")
    a.add_argument("--every", type=int, default=5, help="minutes between checks, 1 to 59 (default: 5)")
    a.add_argument("--systemd", **systemd)
    for name, text in (("remove", "take out only our crontab line (or systemd timer)"),
                       ("uninstall", "the same as remove")):
        actions.add_parser(name, help=text, description=text).add_argument("--systemd", **systemd)
    a = actions.add_parser("status", help="say whether it is installed", description="say whether it is installed",
                           epilog=_codes("0 installed", "1 not installed"),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--systemd", **systemd)
