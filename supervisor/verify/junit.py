"""Reading what a test command said: per-test outcomes from JUnit XML (as pytest writes it), named by pytest node
id ("tests/test_io.py::TestIO::test_roundtrip[2]") where the file can be found, the collection errors among them,
and the totals a runner prints when there is no per-test report ("44 passed, 2 failed" and the like).

Parsed, never executed: the XML and the output come from the agent's code.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from nightshift.supervisor.run import untrusted

# pytest marks a module it could not import with one <error message="collection failure"> entry.
COLLECTION_FAILURE = "collection failure"


def _tail(text: str, n: int) -> list[str]:
    return [line for line in text.strip().splitlines() if line.strip()][-n:]


def node_id(classname: str, name: str, root: Path | None) -> str:
    """pytest's node id for a JUnit (classname, name): the longest dotted prefix of classname that is a .py file
    under ``root`` becomes its path; the rest are classes. Unresolvable (no root, no such file): "classname::name"."""
    parts = [p for p in classname.split(".") if p]
    if root is not None:
        for n in range(len(parts), 0, -1):
            rel = "/".join(parts[:n]) + ".py"
            if (root / rel).is_file():
                return "::".join([rel, *parts[n:], name])
    return f"{classname}::{name}".strip(":")


def parse_junit(path: Path, root: Path | None = None) -> dict[str, dict[str, str]]:
    """{test id: {"outcome": passed|failed|error|skipped|xfailed, "message": first lines}} from a JUnit XML file;
    ids are node ids where ``root`` (the folder the command ran in) holds the test's file."""
    return read_junit(path, root)[0]


def read_junit(path: Path, root: Path | None = None) -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """parse_junit's results, and {test id: objects the equality probe found equal to anything} from the tests'
    properties (PROBE_PROPERTY), in one reading of the file."""
    results: dict[str, dict[str, str]] = {}
    found: dict[str, list[str]] = {}
    try:
        # Written by the test command (the agent's code): a link or a FIFO there is never followed or opened.
        root_node = ET.fromstring(untrusted.read_bytes(path.parent, path.name))
    except (ET.ParseError, OSError):
        return results, found
    for case in root_node.iter("testcase"):
        classname, name = case.get("classname", "") or "", case.get("name", "") or ""
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "error"}.get(tag, "skipped")
                if tag == "skipped" and (node.get("type") or "") == "pytest.xfail":
                    outcome = "xfailed"  # an expected failure: it did not pass
                # pytest puts the assertion's own message first: the measured part a push-back quotes
                message = (node.get("message") or "").strip() or "\n".join(_tail(node.text or "", 4))
                if tag == "error" and message == COLLECTION_FAILURE:
                    outcome = "uncollectable"
                    message = "\n".join(_tail(node.text or "", 2)) or message
                break
        test_id = node_id(classname, name, root) if outcome != "uncollectable" else _module_path(name, root)
        results[test_id] = {"outcome": outcome, "message": message[:400]}
        probed = [p.get("value") or "" for p in case.iter("property") if p.get("name") == PROBE_PROPERTY]
        if probed:
            found[test_id] = probed
    return results, found


def _module_path(dotted: str, root: Path | None) -> str:
    """A module that failed to collect is named by its dotted path ("tests.test_io"): its file where found."""
    found = node_id(dotted, "", root).removesuffix("::")
    return found if found.endswith(".py") else dotted


def collection_errors(results: dict[str, dict[str, str]]) -> list[str]:
    """One line per module the runner could not collect: "tests/test_io.py: ModuleNotFoundError: ..."."""
    out = []
    for test_id, result in results.items():
        if result["outcome"] == "uncollectable":
            last = result["message"].splitlines()[-1] if result["message"] else "collection failure"
            out.append(f"{test_id}: {last.removeprefix('E').strip()}")
    return out


# What common runners print at the end: pytest ("3 passed, 1 failed"), unittest ("Ran 5 tests" / "FAILED
# (failures=1)"), ctest ("100% tests passed, 0 tests failed out of 44"), cargo ("test result: ok. 44 passed;").
_PYTEST = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")
_CTEST = re.compile(r"tests passed, (\d+) tests failed out of (\d+)")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
_UNITTEST_BAD = re.compile(r"(failures|errors)=(\d+)")


def passed_total(output: str) -> int | None:
    """How many tests passed, from the runner's own summary at the end of ``output``; None when none is found."""
    tail = "\n".join(output.strip().splitlines()[-30:])
    ctest = _CTEST.findall(tail)
    if ctest:
        failed, total = ctest[-1]
        return int(total) - int(failed)
    ran = _UNITTEST_RAN.findall(tail)
    if ran:
        bad = sum(int(n) for _, n in _UNITTEST_BAD.findall(tail.split("Ran ")[-1]))
        return int(ran[-1]) - bad
    for line in reversed(tail.splitlines()):
        counts = dict((word, int(n)) for n, word in _PYTEST.findall(line))
        if counts:
            return counts.get("passed", 0)
    return None


PROBE_PROPERTY = "nightshift_always_equal"  # verify/probes/nightshift_equality_probe.py
