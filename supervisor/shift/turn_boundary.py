"""The shift's side of the boundary: every turn is wrapped in nightshift's namespace (supervisor/sandbox/), the run
is held before a turn when the namespace it needs cannot be made (fail closed), and what the namespace ended (a
process the agent left running) is recorded as a ``policy.denied`` event, so the next push-back, `status`, `log`
and the TUI name it like any other refusal.
"""
from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from nightshift.supervisor.backends.base import LaunchSpec
from nightshift.supervisor.config.schema import Config
from nightshift.supervisor.sandbox.boundary import Boundary, boundary_for, notes, open_doors, start_problems
from nightshift.supervisor.sandbox.turn import inner_script, turn_namespace
from nightshift.supervisor.shift.ledger import RunLedger
from nightshift.supervisor.shift.pretool_transport import pretool_transport
from nightshift.supervisor.verify.boundary import test_files

# What a write into a read-only bind says: EROFS for a write, EBUSY for a rename or unlink of the mount itself (rm,
# sed -i, git's lock-and-rename), in C's words and Node's (Claude Code's own tools: "EROFS: read-only file system").
# A busy line counts only where it names a path the namespace keeps (or a file beside one: sed -i renames a temporary
# file over it): NFS's busy `.nfs000...` files are no refusal. Case-sensitive: the erofs filesystem's name is none.
READ_ONLY = re.compile(r"[Rr]ead-only file system|\bEROFS\b")
BUSY = re.compile(r"Device or resource busy|\bEBUSY\b")
PATH_TOKEN = re.compile(r"[\w./@+~-]+")
OUR_WORDS = ("refused by the namespace", "the namespace keeps", "the repository's control files",
             "held-out references do not exist")
GIT_CONTROL = re.compile(r"(^|[\s/'\"])\.git/(config|hooks|info|modules|worktrees)")
MISSING = ("No such file", "not found", "Errno 2", "does not exist", "cannot open", "cannot access",
           "Permission denied")  # the last: Landlock's answer where no namespace can be made (sandbox/tier.py)
DENIED = re.compile(r"Permission denied|\bEACCES\b")
SCAN_BYTES = 1 << 20  # of the agent's log per stop: what a turn printed since the last scan, at most
LEFTOVER = ("was still running when your turn ended and was ended: nothing you start outlives your turn (run "
            "servers and long jobs inside the turn, and wait for them)")


class TurnBoundary:
    def __init__(self, ledger: RunLedger, config: Config, agent):
        self.ledger, self.config, self.agent = ledger, config, agent
        self.run = ledger.run_paths

    def boundary(self, passed: set[str] | None = None) -> Boundary:
        ws = self.run.workspace
        protected = sorted(test_files(ws, passed)) if passed else []
        return boundary_for(ws, self.config, self.run.root, protected)

    def announce(self, claude_sandbox: bool) -> None:
        """One event per supervisor: whether the namespace holds, and which doors are open where it does not."""
        b = self.boundary()
        hook = pretool_transport(self.config)
        self.ledger.emit("policy.sandbox", self.ledger.state["shift"] or None, available=b.problem is None,
                         problem=b.problem, namespace=b.problem is None, claude_sandbox=claude_sandbox,
                         agent=self.config.agent.kind,
                         doors=open_doors(b, self.config.agent.kind), notes=notes(b),
                         pretool_hook=hook.kind, pretool_hook_line=hook.line(), **b.tier.event())

    def refusal(self) -> str | None:
        """Why no turn may start: the boundary cannot hold what the run needs, or the agent's state is missing."""
        b = self.boundary()
        problems = start_problems(b)
        if problems:
            return problems[0]
        if b.problem is None:
            for path in self.agent.state_paths():
                if not path.exists():
                    return (f"{path} does not exist: the agent's own state folder is the one place outside the "
                            f"workspace its turn may write; {self.agent.state_fix(path)}")
        return None

    def wrap(self, spec: LaunchSpec, passed: set[str], http_settings: Path | None = None) -> None:
        """Put the turn's command inside its namespace (the wrapper runs bwrap; the command is in inner.sh).
        ``http_settings``: the agent's settings whose HTTP PreToolUse hook the turn's helper serves."""
        ws = self.run.workspace
        b = self.boundary(passed)
        ns = turn_namespace(b, self.run, spec.shift, spec.name, self.agent.state_paths(),
                            sorted(test_files(ws, passed)), decisions=self.config.agent.kind == "claude",
                            http_settings=http_settings,
                            interactive=bool(getattr(self.agent, "hook_driven", False)),
                            nested=self.config.policy.claude_sandbox and self.config.agent.kind == "claude")
        if not ns.argv:
            return
        inner = spec.wrapper.with_name(f"t{spec.turn}.inner.sh")
        inner.write_text(inner_script(ns, spec.command))
        os.chmod(inner, 0o700)
        spec.namespace_argv, spec.inner_file = ns.argv, inner
        spec.prologue, spec.epilogue = ns.prologue, ns.epilogue

    def record_after_stop(self, shift: int, turn: int) -> None:
        """What the namespace refused or ended during the turn, as refusals: processes left running, writes that
        met a read-only path, reads of a held-out path (each seen in the agent's own output)."""
        self.record_leftovers(shift, turn)
        self.record_helper_problems(shift, turn)
        for rule, line in self.scan_log(shift, turn):
            message = (f"{line}: the namespace keeps references, passed tests, nightshift.toml and .nightshift/ "
                       "read-only" if rule == "read_only" else
                       f"{line}: the repository's control files (.git/config, hooks/, info/) are read-only: git would "
                       "run what they name, outside your turn" if rule == "git_control" else
                       f"{line}: held-out references do not exist for your processes; the verdict on a claim of "
                       "done says how far off they are")
            self.ledger.emit("policy.denied", shift, tool="namespace", input=line[:200], rule=rule, message=message)

    def scan_log(self, shift: int, turn: int) -> list[tuple[str, str]]:
        """Lines of the agent's output since the last scan where the namespace said no (read-only, held out): its
        screen or log, and a headless agent's stream (tool results are JSON strings: their lines are split out)."""
        text = self._unscanned(shift, turn, "log") + self._unscanned(shift, turn, "stream.jsonl").replace("\\n", "\n")
        boundary = self.boundary(self.ledger.held_tests())
        held = [str(p) for p in boundary.heldout]
        kept = kept_places(boundary)
        found: list[tuple[str, str]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if any(words in line for words in OUR_WORDS):
                continue  # a push-back shown on the agent's screen quotes earlier refusals: not a new one
            if refused_write(line, kept):
                found.append(("git_control" if GIT_CONTROL.search(line) else "read_only", line[:300]))
            elif any(h in line for h in held) and any(w in line for w in MISSING):
                found.append(("held_out", line[:300]))
        by_rule: dict[str, dict[str, tuple[str, str]]] = {}
        for rule, line in found:  # at most 10 of each kind, one line a control file: one never hides another
            door = GIT_CONTROL.search(line)
            by_rule.setdefault(rule, {}).setdefault(door.group(0).strip(" '\"") if door else line, (rule, line))
        return [item for items in by_rule.values() for item in list(items.values())[:10]]

    def _unscanned(self, shift: int, turn: int, name: str) -> str:
        path, mark = self.run.turn_file(shift, turn, name), self.run.turn_file(shift, turn, f"{name}.scanned")
        try:
            start = int(mark.read_text()) if mark.exists() else 0
            with open(path, "rb") as fh:
                fh.seek(start)
                data = fh.read(SCAN_BYTES)
        except (OSError, ValueError):
            return ""
        mark.write_text(str(start + len(data)))
        return data.decode("utf-8", "replace")

    def helper_lost(self, shift: int, turn: int) -> bool:
        """Has the turn's decision helper ended while the agent's session lives (checked at a stop, where the
        helper runs on this host)? Every tool call of the session is refused from then on: the caller ends it, and
        the line written here becomes the event."""
        folder = self.run.root / "tmp" / f"s{shift}t{turn}.hook"
        try:
            pid_text, _, host = (folder / "pid").read_text().partition(" ")
            pid = int(pid_text)
        except (OSError, ValueError):
            return False  # no helper for this turn (or not yet up)
        if host.strip() != socket.gethostname() or (folder / "lost").exists():
            return False  # another host's (a Slurm node: its wrapper's epilogue says it) or already told
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                alive = b"pretool_server" in fh.read()
            with open(f"/proc/{pid}/stat", "rb") as fh:
                alive = alive and fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except OSError:
            alive = False
        if alive:
            return False
        (folder / "lost").touch()
        with open(self.run.turn_file(shift, turn, "pretool-problems"), "a") as fh:
            fh.write("the decision helper ended while the session ran: its tool calls were refused (fail closed); "
                     "the session was ended and the next turn has a new helper\n")
        return True

    def record_helper_problems(self, shift: int, turn: int) -> list[str]:
        """What went wrong with the turn's decision helper (its door did not open, it ended mid-turn): each an event;
        the calls it could not decide were refused by Claude Code (the HTTP hook fails closed)."""
        path = self.run.turn_file(shift, turn, "pretool-problems")
        try:
            lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return []
        path.rename(path.with_name(path.name + ".seen"))
        for line in lines[:5]:
            self.ledger.emit("policy.denied", shift, tool="hook", input=f"turn {turn}", rule="helper", message=line)
        return lines

    def record_leftovers(self, shift: int, turn: int) -> list[str]:
        """Processes the turn left running (each ended with the namespace), as refusals the agent is told about."""
        path = self.run.turn_file(shift, turn, "leftovers")
        try:
            lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return []
        path.rename(path.with_name(path.name + ".seen"))
        for line in lines[:20]:
            pid, _, name = line.partition(" ")
            self.ledger.emit("policy.denied", shift, tool="process", input=f"{name or '?'} (pid {pid} in the turn)",
                             rule="leftover", message=f"{name or 'a process'} {LEFTOVER}")
        return lines


def kept_places(boundary: Boundary) -> tuple[set[str], set[str]]:
    """(the read-only paths of the namespace, workspace-relative and absolute; the folders holding a read-only file)."""
    ws = boundary.workspace
    roots, holders = set(), set()
    for path in (*boundary.read_only, *boundary.references):
        rel = str(path.relative_to(ws)) if path.is_relative_to(ws) else str(path)
        roots |= {rel, str(path)}
        holders |= {h for h in (os.path.dirname(rel), str(path.parent)) if h not in ("", ".", "/")}
    return roots, holders


def refused_write(line: str, kept: tuple[set[str], set[str]]) -> bool:
    """Is ``line`` a write the namespace refused (kept: kept_places of the turn's boundary)?"""
    return bool(READ_ONLY.search(line) or BUSY.search(line) and (GIT_CONTROL.search(line) or names_kept(line, kept))
                or DENIED.search(line) and names_kept(line, (kept[0], set())))  # Landlock: a kept path itself


def names_kept(line: str, kept: tuple[set[str], set[str]]) -> bool:
    """Does ``line`` name a kept path, something under one, or a file in a folder that holds one?"""
    roots, holders = kept
    for token in PATH_TOKEN.findall(line):
        token = token.strip("'\".:").removeprefix("./")
        if token in roots or any(token.startswith(root + "/") for root in roots) or os.path.dirname(token) in holders:
            return True
    return False

