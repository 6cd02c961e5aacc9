"""What nightshift adds to a graded test command (issue #46), and what it reads back: its pytest plugin
(verify/probes/nightshift_tests.py: the per-test report, the equality probe, the sentinels) reaches every pytest the
command starts, whatever the command is (`make test`, a script, `cd sub && pytest`, pytest twice, a pipe, another
interpreter), because nothing is added to the command's words: the plugin's folder goes on PYTHONPATH and pytest
finds it by its entry point. A command that sets PYTHONPATH itself (``PYTHONPATH=. python -m pytest``) has the folder
put in front of its own value; a pytest that still cannot see it (a script that sets its own, tox's filtered
environment) runs as it would without nightshift, and the verdict says the plugin did not load.

The reports are written by the test process (the agent's code): parsed as data, never followed through a link.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.run import untrusted

PROBES = Path(__file__).resolve().parent / "probes"  # the plugin, the equality probe and the entry point's dist-info
REPORTS = "reports"  # beside the command's log: one JSON file per pytest process
MAX_REPORT = 64 << 20
# What the supervisor's own environment must not pass to a graded run: options and plugins that change what runs or
# how it reports, and a startup file (the preflight and every verdict run the command the same way).
DROPPED = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSTARTUP", "PYTHONINSPECT", "NIGHTSHIFT_")
# ``PYTHONPATH=`` where the shell reads an assignment (start, after an operator, a space or ``env``); not ``$PYTHONPATH``.
_ASSIGNMENT = re.compile(r"(?<![\w$\-./])((?:export\s+)?PYTHONPATH=)")


def plugin_command(command: str) -> str:
    """``command`` with every PYTHONPATH it assigns keeping the plugin's folder in front (``$NIGHTSHIFT_PLUGIN_PATH``,
    expanded by the shell: no quoting of ours inside the user's quotes)."""
    return _ASSIGNMENT.sub(lambda m: m.group(1) + "${NIGHTSHIFT_PLUGIN_PATH}:", command)


def plugin_env(base: dict[str, str], out_dir: Path, root: Path, manifest: Path | None) -> dict[str, str]:
    """The environment of a graded test run: ``base`` less DROPPED, the plugin's folder first on PYTHONPATH, where
    the reports go, the tree the ids are relative to, and the sentinels' manifest."""
    env = {k: v for k, v in base.items() if not k.startswith(DROPPED)}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # the plugin is an entry point: autoload must stay on
    reports = out_dir / REPORTS
    reports.mkdir(mode=0o700, exist_ok=True)
    env["PYTHONPATH"] = str(PROBES) + (f":{env['PYTHONPATH']}" if env.get("PYTHONPATH") else "")
    env["NIGHTSHIFT_PLUGIN_PATH"] = str(PROBES)
    env["NIGHTSHIFT_TESTS_REPORT"] = str(reports)
    env["NIGHTSHIFT_TESTS_ROOT"] = str(root.resolve())
    if manifest is not None:
        env["NIGHTSHIFT_SENTINELS"] = str(manifest)
    return env


@dataclass
class Reports:
    """What the plugin wrote, every pytest process of the command together."""
    processes: int = 0
    results: dict[str, dict[str, str]] = field(default_factory=dict)
    always_equal: dict[str, list[str]] = field(default_factory=dict)
    sentinels: list[dict] = field(default_factory=list)  # per process: {"outcomes", "planted", "unplanted"}
    collected: int = 0


_WORSE = {"passed": 0, "skipped": 1, "xfailed": 1, "failed": 2, "error": 3, "uncollectable": 4}


def read_reports(out_dir: Path) -> Reports:
    """The reports of one run: a test run by two pytest processes keeps its worse outcome."""
    found = Reports()
    folder = out_dir / REPORTS
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("report-") and n.endswith(".json"))
    except OSError:
        return found
    for name in names:
        try:
            data = json.loads(untrusted.read_bytes(folder, name, limit=MAX_REPORT))
        except (OSError, ValueError, untrusted.Untrusted):
            continue
        if not isinstance(data, dict):
            continue
        found.processes += 1
        found.collected += int(data.get("collected") or 0)
        for test_id, result in _dict(data.get("tests")).items():
            if not isinstance(result, dict):
                continue
            outcome, message = str(result.get("outcome") or "error"), str(result.get("message") or "")[:400]
            before = found.results.get(str(test_id))
            if before is None or _WORSE.get(outcome, 3) > _WORSE.get(before["outcome"], 3):
                found.results[str(test_id)] = {"outcome": outcome, "message": message}
        for test_id, values in _dict(data.get("always_equal")).items():
            found.always_equal.setdefault(str(test_id), []).extend(str(v) for v in values or [])
        found.sentinels.append({"outcomes": {str(k): str(v) for k, v in _dict(data.get("sentinels")).items()},
                                "planted": [str(n) for n in data.get("planted") or []],
                                "unplanted": [str(n) for n in data.get("unplanted") or []],
                                "stopped": bool(data.get("stopped"))})
    return found


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}
