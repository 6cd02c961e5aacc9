"""What the [oracle] section decides beyond its fields (which comparisons and command a fast or full oracle runs),
shared by the validated model (config/oracle.py) and its pydantic-free view (config/oracle_view.py). No imports:
`nightshift compare` reads a cached view without loading pydantic.
"""
from __future__ import annotations


class OracleChoices:
    compare: list
    command: str
    fast_command: str

    def selected(self, full: bool) -> list:
        """The comparisons of the full oracle, or of the fast one (those marked fast; all when none is)."""
        if full or not any(c.fast for c in self.compare):
            return list(self.compare)
        return [c for c in self.compare if c.fast]

    def command_for(self, full: bool) -> str:
        return self.command if full or not self.fast_command else self.fast_command


CONTAINERS = (".npz", ".h5", ".hdf5", ".json", ".nc", ".nc4", ".cdf")


def split_part(spec: str) -> tuple[str, str | None]:
    """("file", "part") from "file.npz:part"; a colon elsewhere in the path is kept."""
    for ext in CONTAINERS:
        marker = ext + ":"
        at = spec.lower().rfind(marker)
        if at >= 0:
            return spec[: at + len(ext)], spec[at + len(marker):] or None
    return spec, None
