"""What each kind of work costs. Every price Brain charges is written here and nowhere else.

- a metered call (most tools, and the REST reads): one unit, taken from the month's free
  allowance while it lasts, then one credit;
- an MCP prompt (``recall``, ``catch_me_up``, ``company_context``) and a web page that shows
  memory without running a tool (the registers, for each organisation shown): the same;
- ``remember``: two credits, always (never from the allowance);
- free: ``forget``, ``init``, ``health``, ``get_profile``, activities, reports and feedback, the
  usage view, and saving knowledge, even at zero credits.

Ingesting a document costs nothing, but it waits while the organisation's usage has run out
(no free reads left and no credits) and starts by itself once credits are added or the month
renews. It is not charged by size on purpose: the balance is shared by every member, and a
charge that grew with a document's length would let a member read, from the balance, the size
of documents they may not see.
"""

from __future__ import annotations

from dataclasses import dataclass

CALL, REMEMBER, KNOWLEDGE, FREE = "call", "remember", "knowledge", "free"
BILLINGS = (CALL, REMEMBER, KNOWLEDGE, FREE)
# The plans every install has: slug -> (name, monthly free reads, unlimited).
BUILT_IN_PLANS = {"free": ("Free", 1000, False), "unlimited": ("Unlimited", 0, True)}


@dataclass(frozen=True)
class Price:
    units: int
    from_allowance: bool


READ = Price(units=1, from_allowance=True)
REMEMBERING = Price(units=2, from_allowance=False)
PROMPT = READ  # a prompt gathers memory server-side: a read, however many it makes
PAGE = READ  # a page that shows memory without running a tool, per organisation it shows


def of_call(billing: str) -> Price | None:
    """The price of one call of a tool with this billing mark; None when it is free."""
    if billing == CALL:
        return READ
    if billing == REMEMBER:
        return REMEMBERING
    if billing in (KNOWLEDGE, FREE):
        return None  # saving knowledge is free; its ingestion waits while usage has run out
    raise ValueError(f"unknown billing {billing!r}; one of {', '.join(BILLINGS)}")
