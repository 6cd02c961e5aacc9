"""The decision of the PreToolUse hook: may this tool call pass the run's boundary? A pure function of the
compiled policy (``<run>/policy.json``, see shift/policy.py) and the call, with light imports only: it runs
before every tool call of the agent (`nightshift hook pretool`).

It only ever refuses (a hook that allows would skip Claude Code's own deny rules and prompts). What it cannot
see (a clever shell command) the sandbox holds where it runs, and the integrity check at every stop catches.
"""
from __future__ import annotations

import fnmatch
import os
import re
import time

from nightshift.supervisor.run.private import write_private_json
from nightshift.supervisor.verify.definition_of_done import same_words

WRITE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
READ_TOOLS = ("Read", "NotebookRead", "Grep", "Glob", "LS")
WEB_TOOLS = ("WebFetch", "WebSearch")
# Shell words that change files: a protected path named with one of these is a write attempt.
WRITERS = re.compile(r"(^|[\s;&|(])(>>?|tee|sed\s+-i|perl\s+-[a-z]*i|cp|mv|rm|truncate|dd|install|rsync|ln|chmod|"
                     r"touch|git\s+(checkout|restore|rm|mv)|python3?\s+-c|patch)(\s|$)")
HISTORY = [
    (re.compile(r"\bgit\b[^;&|]*\bpush\b[^;&|]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s--mirror\b|\s\+\S)"),
     "force-pushing rewrites published history; push normally or open a new branch"),
    (re.compile(r"\bgit\b[^;&|]*\bcommit\b[^;&|]*\s--amend\b"),
     "amending rewrites a commit nightshift may have accepted; make a new commit"),
    (re.compile(r"\bgit\b[^;&|]*\b(rebase|filter-branch|filter-repo|replace|update-ref)\b"),
     "rewriting history is not allowed in a run; make new commits (git revert undoes one)"),
    (re.compile(r"\bgit\b[^;&|]*\breflog\s+(expire|delete)\b"), "the reflog keeps the run's history; leave it"),
]
# A person's verbs the agent may not run: letting a test go from the ratchet is the user's (cli/release_verb.py).
PERSON_ONLY = re.compile(r"(^|[\s;&|(/])(nightshift|nightshift\.supervisor\.cli\.main)\s+release\b")
RESET_HARD = re.compile(r"\bgit\b[^;&|]*\breset\b([^;&|]*)--hard\b([^;&|]*)")
NETWORK = re.compile(r"(^|[\s;&|(])(curl|wget|ssh|scp|sftp|nc|ncat|telnet|ftp|git\s+(clone|fetch|pull|push|ls-remote)|"
                     r"pip3?\s+install|python3?\s+-m\s+pip\s+install|npm\s+(install|i)|conda\s+install)(\s|$)")


def decide(policy: dict, tool: str, tool_input: dict, cwd: str = "") -> tuple[str, str] | None:
    """(rule, message for the agent) when the call is refused, else None."""
    workspace = policy.get("workspace") or cwd
    if tool in WRITE_TOOLS:
        return _write(policy, workspace, tool, tool_input, cwd or workspace)
    if tool in READ_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path") or ""
        return _read(policy, _abs(str(path), cwd or workspace)) if path else None
    if tool in WEB_TOOLS and not policy.get("network", True):
        return "network", "the network is off for this run ([policy] network = false); work offline"
    if tool == "Bash":
        return _bash(policy, str(tool_input.get("command") or ""), cwd or workspace)
    return None


def _abs(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _matches(path: str, pattern: str) -> bool:
    """A protected entry is mostly a plain path (each passed test file): compared as a string, which is fast with
    hundreds of entries and right for names holding [ ]; only an entry with glob characters goes to fnmatch."""
    if path == pattern:
        return True
    if pattern.endswith("/**") and _under(path, pattern[:-3].rstrip("/")):
        return True
    return any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(path, pattern)


def _protected(policy: dict, path: str) -> tuple[str, str] | None:
    for pattern, rule, message in policy.get("protect", []):
        if _matches(path, pattern):
            return rule, message.replace("{path}", os.path.relpath(path, policy.get("workspace") or "/"))
    return None


def _read(policy: dict, path: str) -> tuple[str, str] | None:
    for hidden, message in policy.get("hide", []):
        if _under(path, hidden) or _matches(path, hidden):
            return "hidden", message
    return None


def _write(policy, workspace: str, tool: str, tool_input: dict, cwd: str) -> tuple[str, str] | None:
    raw = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    if not raw:
        return None
    path = _abs(raw, cwd)
    found = _protected(policy, path)
    if found:
        return found
    inside = [workspace] + list(policy.get("writable", []))
    if not any(_under(path, folder) for folder in inside):
        return "outside", (f"writing {raw} is outside the workspace; write in {workspace} (or the temporary "
                           f"directory {policy.get('writable', ['/tmp'])[0]})")
    if path == policy.get("plan") and _changes_definition_of_done(path, tool, tool_input):
        return "definition_of_done", ("CLAUDE.md's \"Definition of done\" section is the user's: leave it as it "
                                      "is and edit the plan and notes only")
    return None


def _changes_definition_of_done(path: str, tool: str, tool_input: dict) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            before = fh.read()
    except OSError:
        return False
    after = before
    if tool == "Write":
        after = str(tool_input.get("content") or "")
    else:
        edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        for edit in edits or []:
            old, new = str(edit.get("old_string") or ""), str(edit.get("new_string") or "")
            if old:
                after = after.replace(old, new) if edit.get("replace_all") else after.replace(old, new, 1)
    return not same_words(before, after)  # ticking its boxes is reporting progress, not rewriting it


def _bash(policy: dict, command: str, cwd: str) -> tuple[str, str] | None:
    for hidden, message in policy.get("hide", []):
        names = {hidden, os.path.basename(hidden.rstrip("/"))} if policy.get("hide_names") else {hidden}
        if any(name and name in command for name in names):
            return "hidden", message
    for pattern, message in HISTORY:
        if pattern.search(command):
            return "history", message
    if PERSON_ONLY.search(command):
        return "person_only", ("releasing a test from the ratchet is the user's: make the test pass by fixing the "
                               "code, or claim blocked and say why the test should change")
    reset = RESET_HARD.search(command)
    if reset:
        words = (reset.group(1) + " " + reset.group(2)).replace("--hard", " ").replace('"', " ").replace("'", " ")
        target = [w for w in words.split() if not w.startswith("-")]
        if target and target[0] not in ("HEAD", "@"):
            return "history", ("`git reset --hard` to another commit can drop accepted work; use `git revert`, or "
                               "`git reset --hard HEAD` to discard uncommitted changes")
    if not policy.get("network", True) and not policy.get("sandbox") and NETWORK.search(command):
        return "network", "the network is off for this run ([policy] network = false); work offline"
    if WRITERS.search(command):
        for word in _words(command):
            found = _protected(policy, _abs(word, cwd)) if word and not word.startswith("-") else None
            if found:
                return found
    return None


def _words(command: str) -> list[str]:
    parts = re.split(r"[\s;&|()<>'\"=]+", command)
    return [p for p in parts if "/" in p or "." in p]


def record_refusal(run_dir: str, record: dict) -> None:
    """For the supervisor, which turns it into a policy.denied event (pathlib and time stay unimported: speed)."""
    folder = os.path.join(run_dir, "refusals")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    name = f"{time.time_ns()}-{os.getpid()}.json"  # sorts in the order they were made
    write_private_json(os.path.join(folder, name), record)
