"""What a model call costs (the agent's turns, the judge's calls), from the usage the API reports, and the
largest answer a budget allows.

Prices are USD per million tokens by model family (Anthropic's list prices). An unknown model is counted at
the most expensive rate, and the outcome says so: a budget is never under-counted.

May import: nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# (input, output) USD per million tokens
OPUS_LEGACY = (15.0, 75.0)     # Claude 3 Opus, Opus 4, Opus 4.1
OPUS = (5.0, 25.0)             # Opus 4.5 and later
SONNET = (3.0, 15.0)
HAIKU = (1.0, 5.0)             # Haiku 4.5 and later
HAIKU_3_5 = (0.8, 4.0)
HAIKU_3 = (0.25, 1.25)
CONSERVATIVE = OPUS_LEGACY
CACHE_WRITE_FACTOR = 1.25      # cache_creation_input_tokens cost 1.25x input
CACHE_READ_FACTOR = 0.1        # cache_read_input_tokens cost 0.1x input


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    known: bool
    note: str = ""

    def cost(self, input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0) -> float:
        inp = input_tokens + cache_write * CACHE_WRITE_FACTOR + cache_read * CACHE_READ_FACTOR
        return (inp * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    def max_output_tokens(self, budget_usd: float, input_tokens: int) -> int:
        """How many output tokens fit in ``budget_usd`` after ``input_tokens`` of input (0 if none)."""
        left = budget_usd - self.cost(input_tokens, 0)
        return max(0, int(left * 1e6 / self.output_per_mtok)) if left > 0 else 0


def _version(name: str, family: str) -> tuple[int, int]:
    """(major, minor) from "claude-opus-4-1-2025...", "claude-opus-4-20250514", "claude-3-5-haiku-..."."""
    after = re.search(rf"{family}-(\d{{1,2}})(?!\d)(?:[-.](\d)(?!\d))?", name)  # not a date
    if after:
        return int(after.group(1)), int(after.group(2) or 0)
    before = re.search(rf"claude-(\d{{1,2}})(?:[-.](\d)(?!\d))?-{family}", name)
    if before:
        return int(before.group(1)), int(before.group(2) or 0)
    return (0, 0)


# The newest version of each family whose list price is in the table above; later versions are assumed to
# keep their family's price, and the outcome says so.
NEWEST_PRICED = {"opus": (4, 8), "sonnet": (4, 6), "haiku": (4, 5)}


def price_for(model: str, override: tuple[float, float] | None = None) -> Price:
    """The price of ``model``; ``override`` is [judge] price_usd_per_mtok (input, output) when set."""
    if override is not None:
        return Price(*override, known=True)
    name = model.lower()
    family = next((f for f in ("opus", "sonnet", "haiku") if f in name), None)
    if family is None:
        return Price(*CONSERVATIVE, known=False,
                     note=f"no price known for model {model!r}: counted at ${CONSERVATIVE[0]:g}/"
                          f"${CONSERVATIVE[1]:g} per million input/output tokens (set [judge] price_usd_per_mtok)")
    version = _version(name, family)
    if family == "opus":
        rate = OPUS if version >= (4, 5) else OPUS_LEGACY
    elif family == "sonnet":
        rate = SONNET
    else:
        rate = HAIKU if version >= (4, 0) else HAIKU_3_5 if version >= (3, 5) else HAIKU_3
    note = ""
    if version > NEWEST_PRICED[family]:
        note = (f"price of {model!r} assumed to be the {family} list price ${rate[0]:g}/${rate[1]:g} per million "
                "input/output tokens (set [judge] price_usd_per_mtok if it differs)")
    return Price(*rate, known=True, note=note)


def usage_cost(price: Price, usage: object) -> float:
    """Cost of one response from its ``usage`` (an SDK Usage object or a dict)."""
    get = (lambda k: usage.get(k)) if isinstance(usage, dict) else (lambda k: getattr(usage, k, None))
    return price.cost(int(get("input_tokens") or 0), int(get("output_tokens") or 0),
                                 int(get("cache_creation_input_tokens") or 0),
                                 int(get("cache_read_input_tokens") or 0))
