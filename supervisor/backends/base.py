"""The Backend protocol: start one agent turn somewhere, find it again after a crash, tell if it lives.

Every backend runs the same wrapper script (see ``write_wrapper``), which touches ``started``, runs the agent
command in the workspace, and writes the exit status into ``exit`` by rename. So the supervisor learns how a turn
ended from files in the run directory, whoever ran it and even if the supervisor was dead at the time.
A target is a small JSON-able dict the backend understands (recorded in ``agent.started`` events).
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# The names of a run's private tmux server and of the agent's session in it. Here, not in tmux.py, so a caller
# that only needs the names (attaching from the TUI through srun) does not import libtmux, which reads
# sys.stdout's encoding at import and fails under Textual's captured stdout.
AGENT_SESSION = "agent"


def socket_for(run_id: str) -> str:
    return f"ns-{run_id}"


@dataclass
class LaunchSpec:
    run_id: str
    shift: int
    turn: int
    command: str  # shell command line of the agent for this turn
    cwd: Path  # the workspace
    env: dict[str, str] = field(default_factory=dict)  # non-secret variables only (secrets are inherited)
    wrapper: Path | None = None  # shifts/<n>/t<turn>.sh
    log_file: Path | None = None  # shifts/<n>/t<turn>.log: everything the agent prints
    started_file: Path | None = None  # touched when the wrapper starts
    exit_file: Path | None = None  # holds the exit status when the agent process ended
    # The turn's namespace (supervisor/sandbox/turn.py): bwrap's argv up to "--", the script it runs (the agent's
    # command inside), and wrapper lines before and after it (outside). Empty: the command runs as it is.
    namespace_argv: list[str] = field(default_factory=list)
    inner_file: Path | None = None
    prologue: str = ""
    epilogue: str = ""

    @property
    def name(self) -> str:
        """A deterministic name, so a crashed supervisor finds the same turn again instead of relaunching it."""
        return f"s{self.shift}t{self.turn}"


class Backend(Protocol):
    kind: str

    def launch(self, spec: LaunchSpec) -> dict[str, Any]:
        """Start the wrapper; return the target."""

    def find(self, spec: LaunchSpec) -> dict[str, Any] | None:
        """The target of this (shift, turn) if it is still running, for adoption after a restart."""

    def is_alive(self, target: dict[str, Any]) -> bool: ...

    def terminate(self, target: dict[str, Any]) -> None: ...

    def send_text(self, target: dict[str, Any], text: str) -> bool:
        """Type text into an interactive agent; False where the backend cannot."""

    def send_keys(self, target: dict[str, Any], *keys: str) -> bool:
        """Press keys in the agent's terminal (tmux key names: "Enter", "Escape"); False where there is none."""
        return False

    def capture(self, target: dict[str, Any], lines: int = 60) -> str:
        """The visible screen or log tail of the agent."""

    def attach_command(self, target: dict[str, Any]) -> list[str] | None:
        """argv that attaches a terminal to the agent, or None."""


def write_wrapper(spec: LaunchSpec) -> Path:
    """Write the per-turn wrapper script (0700). Variables are exported here; secrets never are."""
    assert spec.wrapper and spec.exit_file and spec.started_file
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(spec.env.items()))
    exit_tmp = spec.exit_file.with_name(spec.exit_file.name + ".tmp")
    if spec.namespace_argv and spec.inner_file is not None:
        run = " ".join(shlex.quote(a) for a in spec.namespace_argv) + f" bash {shlex.quote(str(spec.inner_file))}"
    else:
        run = f"(\n{spec.command}\n)"
    # The wrapper does not redirect output: an interactive agent needs the terminal. Each backend keeps the
    # log its own way (tmux pipe-pane, a file for a child process, the job output for Slurm).
    script = (
        "#!/usr/bin/env bash\n"
        f"# nightshift turn {spec.name} of run {spec.run_id}\n"
        f"{exports}"
        f"cd {shlex.quote(str(spec.cwd))} || exit 97\n"
        f": > {shlex.quote(str(spec.started_file))}\n"
        f"{spec.prologue}"
        f"{run}\n"
        "status=$?\n"
        f"{spec.epilogue}"
        f"echo $status > {shlex.quote(str(exit_tmp))} && mv {shlex.quote(str(exit_tmp))} {shlex.quote(str(spec.exit_file))}\n"
        "exit $status\n"
    )
    spec.wrapper.write_text(script)
    os.chmod(spec.wrapper, 0o700)
    return spec.wrapper


def read_exit(spec: LaunchSpec) -> int | None:
    """The turn's exit status, or None while it runs (or if it never wrote one)."""
    try:
        return int(spec.exit_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
