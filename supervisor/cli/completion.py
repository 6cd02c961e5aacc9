"""`nightshift completion bash|zsh`: the shell's completion script, generated from the parser by shtab (a
well-kept library) so it never drifts from the verbs and options.
"""
from __future__ import annotations

import argparse

FOLDERS = {"dir", "reference_dir", "candidate_dir", "references", "run_dir"}  # Tab offers folders for these
FILES = {"output", "key", "target"}


def completion_main(shell: str) -> int:
    import shtab

    from nightshift.supervisor.cli.parser import build_parser

    parser = build_parser()
    verbs = next(a for a in parser._actions if a.dest == "verb")
    verbs.choices.pop("supervise", None)  # internal: never offered to a person's Tab
    for action in _actions(parser):
        if action.dest in FOLDERS:
            action.complete = shtab.DIRECTORY
        elif action.dest in FILES:
            action.complete = shtab.FILE
    print(shtab.complete(parser, shell=shell), end="")
    return 0


def _actions(parser: argparse.ArgumentParser):
    """Every action of the parser and of its sub-commands, at any depth."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _actions(sub)
