"""The oracle: the workspace's outputs compared against reference outputs, with tolerances.

The supervisor calls ``protect_references`` when a run starts and ``run_oracle`` at every stop; the CLI verbs
``nightshift compare`` and ``nightshift plot`` live in ``nightshift.supervisor.cli.oracle_verbs``. Names load on first use
(PEP 562), so importing the config schema (every CLI call, every supervisor) does not import numpy.
"""
from importlib import import_module

_HOME = {"OracleOutcome": "check", "run_oracle": "check", "heldout_store": "integrity", "protect_references": "integrity",
         "restore_references": "integrity", "read_table": "readers", "OracleInputError": "table", "Table": "table"}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f"nightshift.supervisor.verify.oracle.{_HOME[name]}"), name)
    raise AttributeError(f"module 'nightshift.supervisor.verify.oracle' has no attribute {name!r}")
