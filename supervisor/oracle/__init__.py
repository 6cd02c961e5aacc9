"""The oracle: the workspace's outputs compared against reference outputs, with tolerances.

The supervisor calls ``protect_references`` when a run starts and ``run_oracle`` at every stop; the CLI verbs
``nightshift compare`` and ``nightshift plot`` live in ``supervisor.oracle.cli``.
"""
from supervisor.oracle.check import OracleOutcome, run_oracle
from supervisor.oracle.config import ColumnOverride, CompareConfig, OracleConfig
from supervisor.oracle.integrity import heldout_store, protect_references, restore_references
from supervisor.oracle.readers import read_table
from supervisor.oracle.table import OracleInputError, Table

__all__ = ["ColumnOverride", "CompareConfig", "OracleConfig", "OracleInputError", "OracleOutcome", "Table",
           "heldout_store", "protect_references", "read_table", "restore_references", "run_oracle"]
