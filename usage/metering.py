"""Charging for work, exactly, under any number of concurrent callers.

Each charge is one conditional update: the month's free allowance grows only while it stays
within the plan (an upsert whose update has a ``WHERE``), and the balance shrinks only while it
stays at or above zero (an ``UPDATE ... WHERE credits >= n``). PostgreSQL re-checks the
condition on the row it locked, so fifty callers at the edge never take more than there is,
and a call is charged at most once because only ``charge`` takes and only ``refund`` gives back
what that one charge took. Callers charge outside long transactions: the month row is locked
only for the instant of the update.

``brain.mcp.meter.metered`` is the one rule every way in follows (tool runs for MCP, REST, pages and jobs,
prompts, the REST endpoints that are not tools, pages that read memory themselves): pay before the
work runs, be refused with ``OutOfCredits`` when it cannot be paid, and be given back what was
taken when the work does not succeed.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from brain.infra.postgres import prepared_cursor
from brain.mcp.meter import BILLER, Biller, Charge, OutOfCredits
from brain.mcp.prices import READ, Price
from brain.models import Organisation
from usage.models import Account, Month, Plan, default_plan_id

logger = logging.getLogger("brain.calls")


def month_of(org: Organisation, now: datetime | None = None) -> date:
    """Day 1 of the calendar month ``now`` falls in, in the organisation's time zone."""
    return timezone.localtime(now or timezone.now(), ZoneInfo(org.time_zone)).date().replace(day=1)


def renews_at(org: Organisation, now: datetime | None = None) -> datetime:
    """When the free allowance starts again: midnight of next month's first day, local time."""
    first = month_of(org, now)
    following = (first + timedelta(days=32)).replace(day=1)
    return datetime.combine(following, time.min, tzinfo=ZoneInfo(org.time_zone))


def get_account(org: Organisation, *, fresh: bool = False) -> Account:
    """The organisation's account, created on the default plan the first time it is needed.

    Unless ``fresh``, an account loaded with the organisation (token authentication does) is used
    as it is: its plan is as old as the request, and its balance is never trusted for a charge."""
    cached = None if fresh else org._state.fields_cache.get("account")  # loaded with org, if it was
    if isinstance(cached, Account):
        return cached
    account = Account.objects.select_related("plan").filter(org=org).first()
    if account is None:
        Account.objects.get_or_create(org=org, defaults={"plan_id": default_plan_id()})
        account = Account.objects.select_related("plan").get(org=org)
    return account


def is_charging(plan: Plan) -> bool:
    return settings.BRAIN_METERING and not plan.unlimited


def charge(*, org: Organisation, price: Price, what: str = "this call", now: datetime | None = None) -> Charge:
    """Take ``price`` from the month's allowance or the balance, or raise ``OutOfCredits``.

    On a plan that charges nothing the work is only counted."""
    account = get_account(org)
    month = month_of(org, now)
    plan = account.plan
    if not is_charging(plan):
        _count(org.pk, month, price)
        return Charge(org.pk, month, price)
    fits = price.from_allowance and price.units <= plan.monthly_free_reads
    if fits and _count(org.pk, month, price, free=price.units, free_limit=plan.monthly_free_reads):
        return Charge(org.pk, month, price, free=price.units)
    if _pay_with_credits(org.pk, month, price.units):
        return Charge(org.pk, month, price, credits=price.units)
    message = out_of_credits_message(org, plan, what=what, price=price, now=now)
    raise OutOfCredits(message, renews_at=renews_at(org, now).isoformat())


def refund(spent: Charge) -> None:
    """Give back exactly what ``spent`` took (a call that did not succeed is not paid for)."""
    with transaction.atomic():
        if spent.credits:
            Account.objects.filter(org_id=spent.org_id).update(credits=F("credits") + spent.credits)
        Month.objects.filter(org_id=spent.org_id, month=spent.month).update(
            reads=F("reads") - 1,
            free_used=F("free_used") - spent.free,
            credits_spent=F("credits_spent") - spent.credits,
        )


def can_pay(org: Organisation, price: Price = READ, now: datetime | None = None) -> bool:
    """Whether ``charge`` would succeed now. Advisory: another caller may take it first."""
    account = get_account(org, fresh=True)
    if not is_charging(account.plan):
        return True
    if account.credits >= price.units:
        return True
    if not price.from_allowance or price.units > account.plan.monthly_free_reads:
        return False
    used = Month.objects.filter(org=org, month=month_of(org, now)).values_list("free_used", flat=True).first() or 0
    return used + price.units <= account.plan.monthly_free_reads


def refusal(org: Organisation, *, what: str, price: Price = READ) -> OutOfCredits:
    """The error work that cannot be paid for now is refused with (``brain.mcp.meter.refuse_unless_payable``)."""
    account = get_account(org)
    return OutOfCredits(
        out_of_credits_message(org, account.plan, what=what, price=price), renews_at=renews_at(org).isoformat()
    )


def out_of_credits_message(
    org: Organisation, plan: Plan, *, what: str, price: Price = READ, now: datetime | None = None
) -> str:
    renewal = renews_at(org, now)
    how = (
        f"An operator can add credits in Brain's admin (Usage, Accounts) or with "
        f"'manage.py credits --org {org.slug} add N'"
    )
    if not price.from_allowance:
        return (
            f"Brain cannot run {what}: it costs {price.units} credits and {org.name} has fewer left. Tell the "
            f"user so. {how}. Reading and forgetting still work while free reads last."
        )
    return (
        f"Brain cannot run {what}: {org.name} has used the {plan.monthly_free_reads:,} free reads of its "
        f"{plan.name} plan for this month and has no credits left. Tell the user so. {how}; otherwise the "
        f"free reads start again on {renewal:%Y-%m-%d} ({org.time_zone}). Do not retry before then."
    )


def _pay_with_credits(org_id: int, month: date, units: int) -> bool:
    """Take ``units`` credits and count the call, in one statement (so with no transaction to
    hold): the month's row is written only if the balance had them."""
    sql = """
        WITH paid AS (
            UPDATE usage_account SET credits = credits - %(units)s
            WHERE org_id = %(org)s AND credits >= %(units)s
            RETURNING org_id
        )
        INSERT INTO usage_month (org_id, month, reads, free_used, credits_spent)
        SELECT org_id, %(month)s, 1, 0, %(units)s FROM paid
        ON CONFLICT (org_id, month) DO UPDATE SET
            reads = usage_month.reads + 1,
            credits_spent = usage_month.credits_spent + %(units)s
        RETURNING 1
    """
    with prepared_cursor(connection.alias) as cursor:  # planned once per connection (brain.infra.postgres)
        cursor.execute(sql, {"org": org_id, "month": month, "units": units})
        return cursor.fetchone() is not None


def _count(
    org_id: int, month: date, price: Price, *, free: int = 0, credits: int = 0, free_limit: int | None = None
) -> bool:
    """Count one call in the month's row, creating it. With ``free_limit``, only while the free
    units stay within it; answers whether the row was written."""
    guard = "WHERE usage_month.free_used + %(free)s <= %(limit)s" if free_limit is not None else ""
    sql = f"""
        INSERT INTO usage_month (org_id, month, reads, free_used, credits_spent)
        VALUES (%(org)s, %(month)s, 1, %(free)s, %(credits)s)
        ON CONFLICT (org_id, month) DO UPDATE SET
            reads = usage_month.reads + 1,
            free_used = usage_month.free_used + %(free)s,
            credits_spent = usage_month.credits_spent + %(credits)s
        {guard}
        RETURNING 1
    """  # noqa: S608 -- the guard is one of two fixed texts
    params: dict[str, int | date | None] = {
        "org": org_id,
        "month": month,
        "free": free,
        "credits": credits,
        "limit": free_limit,
    }
    with prepared_cursor(connection.alias) as cursor:  # planned once per connection (brain.infra.postgres)
        cursor.execute(sql, params)
        return cursor.fetchone() is not None


def plug_in() -> None:
    """Charge and refund every metered call (``brain.mcp.meter``) through this app's accounts, and
    answer whether an organisation can pay."""
    BILLER.plug(BILLING)


BILLING = Biller(charge=charge, refund=refund, can_pay=can_pay, refusal=refusal)
