"""The names of the sandbox's doors a user accepts open by name: the parts a machine may lack (``[policy]
open_doors``), and ``namespace`` (no bubblewrap at all) that ``verify-result --accept-open`` also takes. A leaf
without pydantic: the CLI's parser, the schema and the sandbox (probe.py, which says why each is open) read it.
"""
from __future__ import annotations

PART_DOORS = ("userns", "seccomp", "landlock")
DOORS = ("namespace", *PART_DOORS)
