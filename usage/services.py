"""Changing what an organisation may spend: credits and plans. Operators only (see ``admin``)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.mcp.meter import payable_again
from brain.models import Organisation
from usage.metering import get_account
from usage.models import Account, Plan, get_plan

MAX_GRANT = 10_000_000_000


def add_credits(*, actor: Actor | User | None, org: Organisation, amount: int) -> int:
    """Add ``amount`` credits (negative takes them away, never below zero); returns the balance.

    Knowledge that waited for credits starts ingesting at once."""
    if not -MAX_GRANT <= amount <= MAX_GRANT or amount == 0:
        raise InvalidArgument(f"Add a whole number of credits between -{MAX_GRANT:,} and {MAX_GRANT:,}, not 0.")
    get_account(org)
    with transaction.atomic():
        changed = Account.objects.filter(org=org, credits__gte=max(0, -amount)).update(credits=F("credits") + amount)
        if not changed:
            balance = Account.objects.get(org=org).credits
            raise InvalidArgument(f"{org.slug} has {balance:,} credits; taking {-amount:,} would go below zero.")
        balance = Account.objects.get(org=org).credits
        record_audit(
            actor=actor,
            org=org,
            action="credits.added",
            target=org.slug,
            details={"amount": amount, "balance": balance},
        )
    if amount > 0:
        payable_again(org)
    return balance


def change_plan(*, actor: Actor | User | None, org: Organisation, plan: str) -> Account:
    """Move the organisation to another plan from now on; this month's counts stay."""
    chosen = get_plan(plan)
    if chosen is None:
        names = ", ".join(Plan.objects.values_list("slug", flat=True))
        raise NotFound(f"No plan {plan!r}; the plans are: {names}.")
    account = get_account(org, fresh=True)
    old = account.plan.slug
    with transaction.atomic():
        Account.objects.filter(org=org).update(plan=chosen)
        record_audit(
            actor=actor, org=org, action="plan.changed", target=org.slug, details={"old": old, "new": chosen.slug}
        )
    payable_again(org)
    account.refresh_from_db()
    return account
