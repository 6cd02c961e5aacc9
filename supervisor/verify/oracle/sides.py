"""The two files a comparison reads: the candidate, written by the agent's code (opened once, pinned, never through a
link out of the workspace, never a reference file itself), and the reference, from its place in the workspace or,
held out, from the run's private store.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.verify.oracle.copies import INSTEAD
from nightshift.supervisor.verify.oracle.integrity import heldout_reference, resolve
from nightshift.supervisor.verify.oracle.readers import read_table, split_part
from nightshift.supervisor.verify.oracle.table import OracleInputError

if TYPE_CHECKING:  # the validated models load pydantic: `nightshift compare` may run without it
    from nightshift.supervisor.config.oracle import CompareConfig


def read_candidate(comp: CompareConfig, workspace: Path, references: dict[tuple[int, int], str] | None = None):
    with contextlib.ExitStack() as stack:
        return read_table(*opened_candidate(comp, workspace, stack, references))


def opened_candidate(comp: CompareConfig, workspace: Path, stack: contextlib.ExitStack,
                     references: dict[tuple[int, int], str] | None = None) -> tuple[Path, str | None]:
    """The candidate's file and part: written by the agent's code, so no link out, no FIFO, no device, and opened
    once: the readers read the file checked here (pinned while ``stack`` lasts), never a link the agent's
    processes swap in meanwhile. A candidate that is a reference file (a link to it inside the workspace, a hard
    link: ``references`` by (st_dev, st_ino)) is a copy, refused."""
    cand_path, cand_part = split_part(comp.candidate)
    path = resolve(workspace, cand_path)
    try:
        opened = stack.enter_context(untrusted.pinned(workspace, path))
        st = os.stat(opened)  # the file opened, not what the name points to now
        same = (references or {}).get((st.st_dev, st.st_ino))
        if same is not None:
            raise OracleInputError(f"{comp.candidate} is {same} itself (a link to it): a copy of a reference, not "
                                   f"the solver's output; {INSTEAD}", "candidate", "copy of a reference")
        return opened, cand_part
    except untrusted.Untrusted as exc:  # a dangling link too: named, not "missing"
        raise OracleInputError(str(exc), "candidate", "untrusted file") from None
    except FileNotFoundError:
        raise OracleInputError(f"{path}: no such file", "candidate", "missing file") from None
    except OSError as exc:  # a file where a folder of the path should be
        raise OracleInputError(f"{path}: cannot be opened ({exc})", "candidate", "missing file") from None


def reference_path(comp: CompareConfig, workspace: Path, store: Path | None) -> tuple[Path, str | None]:
    """(the file the reference is read from, the part in it): a held-out one from the run's private store."""
    ref_path, ref_part = split_part(comp.reference)
    path = resolve(workspace, ref_path)
    if comp.heldout:
        path, problem = heldout_reference(store, comp.name, path)
        if problem:
            raise OracleInputError(problem, "reference", "missing file")
    return path, ref_part


def read_reference(comp: CompareConfig, workspace: Path, store: Path | None):
    """(the file the reference was read from, its table)."""
    path, ref_part = reference_path(comp, workspace, store)
    return path, read_table(path, ref_part)
