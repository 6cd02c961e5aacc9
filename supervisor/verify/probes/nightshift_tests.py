"""nightshift's pytest plugin, auto-loaded by every pytest a graded test command starts (issue #46): it writes the
per-test report the verdict reads, loads the equality probe with pytest's assertion-pass hook on, and plants the
sentinels the supervisor chose (tests derived from the real ones, some that must fail and some that must pass) in
the same process as the tests.

Loaded through its ``pytest11`` entry point (``nightshift_tests-1.dist-info`` beside it, on the PYTHONPATH
nightshift gives the command), never with ``-p``: a pytest that cannot see this folder (a command that sets its own
PYTHONPATH inside a script, tox's filtered environment) runs as it would without nightshift, and the verdict says
the plugin did not load, instead of pytest refusing to start. Nothing here may need more than pytest and the
standard library: it runs in the user's interpreter, whatever it is.

Environment (set by the supervisor, verify/test_plugin.py): NIGHTSHIFT_TESTS_REPORT, the folder for one JSON report
per pytest process; NIGHTSHIFT_TESTS_ROOT, the tree the ids are relative to; NIGHTSHIFT_SENTINELS, the manifest.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

import nightshift_equality_probe as _probe

_REPORT_DIR = os.environ.get("NIGHTSHIFT_TESTS_REPORT", "")
_ROOT = os.environ.get("NIGHTSHIFT_TESTS_ROOT", "")


def _read_manifest() -> list:
    """Read once, at import (before any conftest.py or test module runs): what the tests' code does later to the
    file changes nothing here; the supervisor judges by its own copy."""
    path = os.environ.get("NIGHTSHIFT_SENTINELS", "")
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            return list(json.load(fh))
    except (OSError, ValueError):
        return []


_MANIFEST = _read_manifest()
_NAMES = {entry.get("name") for entry in _MANIFEST}  # an xdist controller knows its sentinels by name only
_state = {"tests": {}, "sentinels": {}, "planted": [], "unplanted": [], "always_equal": {}, "collected": None}
_sentinel_ids: dict = {}  # node id -> sentinel name


def _test_id(config, nodeid: str) -> str:
    """The node id with its file relative to the tree the command runs in (``cd sub && pytest`` or an ini file
    elsewhere makes pytest's own rootdir-relative id differ)."""
    head, sep, rest = nodeid.partition("::")
    if not _ROOT:
        return nodeid
    root = getattr(config, "rootpath", None) or getattr(config, "rootdir", "")  # rootpath: pytest 6.1 and later
    path = os.path.normpath(os.path.join(str(root), head))
    rel = os.path.relpath(path, _ROOT)
    return nodeid if rel.startswith("..") else rel.replace(os.sep, "/") + sep + rest


def _message(report) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, "Skipped: why")
        return str(longrepr[2]).replace("Skipped: ", "", 1)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)
    lines = [line for line in str(longrepr).splitlines() if line.strip()]
    return "\n".join(lines[-2:])


def _outcome(report) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "passed" if report.passed else "failed"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return "skipped" if report.skipped else "passed"


_WORSE = {"passed": 0, "skipped": 1, "xfailed": 1, "failed": 2, "error": 3}


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before any conftest.py is imported: the probe is registered and the pass hook is on for every module pytest
    rewrites (its ini value is read as each test module is rewritten)."""
    if not early_config.pluginmanager.has_plugin(_probe.__name__):
        early_config.pluginmanager.register(_probe, _probe.__name__)
    cache = getattr(early_config, "_inicache", None)
    if isinstance(cache, dict):
        cache["enable_assertion_pass_hook"] = True


def _module_of(item):
    return item.getparent(pytest.Module)


def _derived(module, entry):
    """The sentinel's function: its source (the real test's lines, renamed, the expected value changed or not) run
    in the real module's namespace, so the same imports and fixtures resolve; pytest rewrites its asserts."""
    source = entry["source"]
    filename = str(module.path)
    try:
        import ast
        from _pytest.assertion.rewrite import rewrite_asserts
        tree = ast.parse(source, filename)
        rewrite_asserts(tree, source.encode("utf-8"), module.path, module.config)
        code = compile(tree, filename, "exec")
    except Exception:  # noqa: BLE001 - pytest's rewriter moved: plain asserts fail just the same
        code = compile(source, filename, "exec")
    namespace = dict(module.obj.__dict__)
    exec(code, namespace)  # noqa: S102 - the test's own code, in the test process, as pytest runs it
    return namespace[entry["name"]]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Each sentinel goes right after the test it was derived from, as a test of the same module (the same
    conftest.py files, fixtures and hooks apply to it): after every other plugin chose what runs."""
    by_path: dict = {}
    for index, item in enumerate(items):
        module = _module_of(item)
        if module is not None:
            by_path.setdefault(os.path.realpath(str(module.path)), (module, {}))[1][item.name] = index
    inserts = []
    for entry in _MANIFEST:
        found = by_path.get(os.path.realpath(entry["file"]))
        if found is None:
            _state["unplanted"].append(entry["name"])
            continue
        module, names = found
        try:
            sentinel = pytest.Function.from_parent(module, name=entry["name"], callobj=_derived(module, entry))
        except Exception as exc:  # noqa: BLE001 - its module's namespace would not take it: said, judged outside
            _state["unplanted"].append(entry["name"])
            _state["sentinels"][entry["name"]] = "not planted: " + type(exc).__name__
            continue
        at = names.get(entry.get("after"), max(names.values()))
        inserts.append((at, sentinel))
        _sentinel_ids[sentinel.nodeid] = entry["name"]
        _state["planted"].append(entry["name"])
    for at, sentinel in sorted(inserts, key=lambda pair: -pair[0]):
        items.insert(at + 1, sentinel)
    _state["collected"] = len(items) - len(inserts)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_logreport(report):
    """Every phase's report as pytest's own hooks are about to receive it (a report forged in the process, by
    pytest_runtest_makereport or by an outer wrapper of this hook, is recorded forged: that is what the sentinels are
    there to show). A sentinel's failure is then turned into a pass (a skip at setup, so its call does not run) before
    pytest counts it: it never reaches the exit status, --maxfail or the summary of failures."""
    _record(report)
    yield


def _record(report) -> None:
    config = _config[0] if _config else None
    name = _sentinel_ids.get(report.nodeid)
    if name is None and report.nodeid.rsplit("::", 1)[-1] in _NAMES:  # planted by an xdist worker
        name = report.nodeid.rsplit("::", 1)[-1]
        if name not in _state["planted"]:
            _state["planted"].append(name)
    outcome = _outcome(report)
    if name is not None:
        if outcome == "failed" and _message(report).startswith(("assert", "AssertionError")):
            outcome = "failed (assert)"  # a wrong value, not a state its twin left behind (a duplicate, a lock)
        before = _state["sentinels"].get(name, "passed")
        _state["sentinels"][name] = outcome if _WORSE.get(outcome, 3) >= _WORSE.get(before, 3) else before
        if report.failed:
            if report.when == "setup":
                report.outcome, report.longrepr = "skipped", (str(report.fspath), 0, "Skipped")
            else:
                report.outcome, report.longrepr = "passed", None
        return
    if config is None:
        return
    test_id = _test_id(config, report.nodeid)
    before = _state["tests"].get(test_id)
    if before is None or _WORSE.get(outcome, 3) > _WORSE.get(before["outcome"], 3):
        _state["tests"][test_id] = {"outcome": outcome, "message": _message(report)[:400]}
    forged = [str(value) for key, value in getattr(report, "user_properties", []) if key == _probe.PROPERTY]
    if forged:
        _state["always_equal"].setdefault(test_id, [])
        _state["always_equal"][test_id] += [f for f in forged if f not in _state["always_equal"][test_id]]


def pytest_collectreport(report):
    if report.failed and _config:
        lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
        _state["tests"][_test_id(_config[0], report.nodeid)] = {"outcome": "uncollectable",
                                                                "message": "\n".join(lines[-2:])[:400]}


_config: list = []


def pytest_configure(config):
    _config[:] = [config]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """The report, one file per pytest process (a command that runs pytest twice leaves two); the sentinels' ids
    are kept out of pytest's cache of node ids, which the agent can read."""
    nf = session.config.pluginmanager.get_plugin("nfplugin")
    if nf is not None and isinstance(getattr(nf, "cached_nodeids", None), set):
        nf.cached_nodeids -= set(_sentinel_ids)
    if not _REPORT_DIR or hasattr(session.config, "workerinput"):  # an xdist worker: its controller reports
        return
    # -x, --maxfail or an interrupt stops the run: what was not run then was not lost
    stopped = bool(getattr(session, "shouldfail", False) or getattr(session, "shouldstop", False))
    data = dict(_state, stopped=stopped, exit_status=int(exitstatus), pid=os.getpid(), python=sys.version.split()[0],
                pytest=pytest.__version__)
    path = os.path.join(_REPORT_DIR, f"report-{os.getpid()}-{len(os.listdir(_REPORT_DIR))}.json")
    try:
        with open(path, "x", encoding="utf-8") as fh:
            json.dump(data, fh)
    except OSError:
        pass
