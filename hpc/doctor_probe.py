"""What runs inside the tiny job of `nightshift doctor --slurm`: ``python -m nightshift.hpc.doctor_probe OUT CHECKS``.

It looks at the job's environment as the agent and the oracle will find it (after [slurm] modules, setup and
env) and writes what it found to OUT as JSON: the tools on PATH with their versions, the Python packages,
which credential variables are set (names only: a value is never read into the report), the [slurm] env
variables that arrived, the loaded modules, and the oracle command's program. Standard library only.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


def version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def probe(wanted: dict) -> dict:
    tools = {}
    for tool, flag in (("claude", "--version"), ("git", "--version"), ("tmux", "-V")):
        where = shutil.which(tool)
        tools[tool] = {"path": where, "version": version([tool, flag]) if where else None}
    oracle = wanted.get("oracle_program")
    return {
        "host": socket.gethostname(),
        "python": sys.executable, "python_version": sys.version.split()[0],
        "tools": tools,
        "packages": {name: importlib.util.find_spec(name) is not None for name in wanted.get("packages", [])},
        "credentials": [name for name in CREDENTIALS if os.environ.get(name)],
        "claude_login": os.path.exists(os.path.join(os.environ.get("CLAUDE_CONFIG_DIR")
                                                    or os.path.expanduser("~/.claude"), ".credentials.json")),
        "env": {name: name in os.environ for name in wanted.get("env", [])},
        "modules": os.environ.get("LOADEDMODULES", ""),
        "oracle_program": {"name": oracle, "path": shutil.which(oracle) if oracle else None},
        "path": os.environ.get("PATH", ""),
    }


def main(argv: list[str]) -> int:
    out, wanted = argv[0], json.loads(argv[1])
    report = probe(wanted)
    tmp = f"{out}.tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
        json.dump(report, fh)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
