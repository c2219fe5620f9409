"""What each kind of work costs. Every price Brain charges is written here and nowhere else.

- a metered call (most tools, and the REST reads): one unit, taken from the month's free
  allowance while it lasts, then one credit;
- ``remember``: two credits, always (never from the allowance);
- ingesting a saved document: one unit per started 10,000 characters, from the allowance and
  then credits, charged once when a worker first takes the document (retries, re-ingestion and
  new embeddings never charge again); a document saved by ``remember`` is not charged again;
- free: ``forget``, ``init``, ``health``, ``get_profile``, activities, reports and feedback, the
  usage view and saving knowledge itself, even at zero credits.

A price of several units is taken whole: from the allowance if all of it fits, otherwise all
from credits; never split, so each charge is a single conditional update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CALL, REMEMBER, KNOWLEDGE, FREE = "call", "remember", "knowledge", "free"
# The plans every install has: slug -> (name, monthly free reads, unlimited).
BUILT_IN_PLANS = {"free": ("Free", 1000, False), "unlimited": ("Unlimited", 0, True)}
BILLINGS = (CALL, REMEMBER, KNOWLEDGE, FREE)
INGEST_CHARS_PER_UNIT = 10_000


@dataclass(frozen=True)
class Price:
    units: int
    from_allowance: bool
    counts_as: str  # the Month column it counts in: "reads" or "ingested_units"

    @property
    def count(self) -> int:
        """How much it adds to its column: one call, or the units ingested."""
        return 1 if self.counts_as == "reads" else self.units


def of_call(billing: str) -> Price | None:
    """The price of one call of a tool with this billing mark; None when it is free."""
    if billing == CALL:
        return Price(units=1, from_allowance=True, counts_as="reads")
    if billing == REMEMBER:
        return Price(units=2, from_allowance=False, counts_as="reads")
    if billing in (KNOWLEDGE, FREE):
        return None  # saving knowledge is paid when it is ingested
    raise ValueError(f"unknown billing {billing!r}; one of {', '.join(BILLINGS)}")


def of_ingestion(characters: int) -> Price:
    return Price(
        units=max(1, math.ceil(characters / INGEST_CHARS_PER_UNIT)), from_allowance=True, counts_as="ingested_units"
    )
