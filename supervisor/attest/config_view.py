"""The parts of a run's frozen config.toml an attestation reads, without pydantic: nightshift wrote that file from a
config it validated when the run began, so it is read as plain TOML here (an attestation is a short command; the
schema's models cost more to load than the attestation takes to write). A workspace's nightshift.toml, a
stranger's input, is never read this way: `verify-result --rerun` validates it in full.

``file_of`` is the oracle's rule for "file.npz:key" (verify/oracle/readers.split_part) without importing numpy;
tests/test_attest_units.py holds the two to the same answers.
"""
from __future__ import annotations

import tomllib
from types import SimpleNamespace
from typing import Any

CONTAINERS = (".npz", ".h5", ".hdf5", ".json")  # as verify/oracle/readers.CONTAINERS


def file_of(spec: str) -> str:
    for ext in CONTAINERS:
        at = spec.lower().rfind(ext + ":")
        if at >= 0:
            return spec[: at + len(ext)]
    return spec


def _ns(table: dict[str, Any] | None, **defaults: Any) -> SimpleNamespace:
    return SimpleNamespace(**{**defaults, **(table or {})})


def run_config(text: str) -> SimpleNamespace:
    """goal, agent, verify, oracle (with compare entries), judge and attest, with nightshift's defaults."""
    raw = tomllib.loads(text)
    oracle = raw.get("oracle")
    if oracle is not None:
        compares = [_ns(c, heldout=False, x=None, rtol=1e-3, atol=0.0, tolerance="sum", per_column={}, fields=[])
                    for c in oracle.get("compare") or []]
        oracle = _ns({k: v for k, v in oracle.items() if k != "compare"}, command="", heldout_budget=32.0)
        oracle.compare = compares
    judge = raw.get("judge")
    return SimpleNamespace(
        goal=raw.get("goal", ""), agent=_ns(raw.get("agent"), kind="claude", claude_bin="claude", model=""),
        verify=_ns(raw.get("verify"), test_command=""), oracle=oracle,
        judge=_ns(judge, enabled=True, model="claude-sonnet-4-6", criteria=[]) if judge is not None else None,
        attest=_ns(raw.get("attest"), key="", note=True, host=False))
