"""Small value types shared by the config sections (durations written as "30m", "6h", "90s" or seconds)."""
from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> float:
    """Seconds from 90, "90s", "30m", "6h", "2d" or "1h30m"."""
    if isinstance(value, bool):
        raise ValueError("must be a duration like '30m', '6h' or a number of seconds")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("must not be negative")
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", text)
        if parts and re.fullmatch(r"(\s*\d+(?:\.\d+)?\s*[smhd])+", text):
            return float(sum(float(num) * _UNITS[unit] for num, unit in parts))
        try:
            return float(text)
        except ValueError:
            pass
    raise ValueError(f"must be a duration like '30m', '6h' or a number of seconds, got {value!r}")


Duration = Annotated[float, BeforeValidator(parse_duration)]


class Section(BaseModel):
    """Base of every config table: unknown keys are errors, so a typo never passes silently. Each key's docstring is
    its description: config/reference.py reads them from the source for the README's reference (pydantic's
    use_attribute_docstrings would parse every model's source at each import of the schema, ~40 ms a process)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
