"""Reads of usage: an organisation's month and one member's month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db.models import Count, OuterRef, QuerySet, Subquery, Sum
from django.utils import timezone

from brain.infra.prepared import Prepared
from brain.models import Organisation, ToolCall
from usage.metering import get_account, is_charging, month_of, renews_at
from usage.models import Account, Month


@dataclass(frozen=True)
class Usage:
    plan: str
    plan_name: str
    unlimited: bool
    monthly_free_reads: int
    month: date
    reads: int
    free_used: int
    credits: int
    credits_spent: int
    renews_at: datetime

    @property
    def free_left(self) -> int | None:
        return None if self.unlimited else max(0, self.monthly_free_reads - self.free_used)

    @property
    def out_of_credits(self) -> bool:
        """Nothing billed can run until credits arrive or the month renews."""
        return not self.unlimited and self.free_left == 0 and self.credits == 0


def _with_month(*, org_id: int, month: date) -> QuerySet[Account]:
    months = Month.objects.filter(org_id=OuterRef("org_id"), month=month)
    return (
        Account.objects.select_related("plan")
        .filter(org_id=org_id)
        .annotate(
            month_reads=Subquery(months.values("reads")),
            month_free_used=Subquery(months.values("free_used")),
            month_credits_spent=Subquery(months.values("credits_spent")),
        )
    )


# get_profile runs it on every call: composed once (brain.infra.prepared).
ACCOUNT_WITH_MONTH = Prepared(_with_month, org_id=int, month=date)


def get_usage(*, org: Organisation, now: datetime | None = None) -> Usage:
    """The plan, the balance as it is now, and the month's counters: one statement."""
    month = month_of(org, now)
    account = ACCOUNT_WITH_MONTH.first(org_id=org.pk, month=month) or get_account(org, fresh=True)
    row = Month(
        org=org,
        month=month,
        reads=getattr(account, "month_reads", None) or 0,
        free_used=getattr(account, "month_free_used", None) or 0,
        credits_spent=getattr(account, "month_credits_spent", None) or 0,
    )
    return Usage(
        plan=account.plan.slug,
        plan_name=account.plan.name,
        unlimited=not is_charging(account.plan),
        monthly_free_reads=account.plan.monthly_free_reads,
        month=month,
        reads=row.reads,
        free_used=row.free_used,
        credits=account.credits,
        credits_spent=row.credits_spent,
        renews_at=renews_at(org, now),
    )


@dataclass(frozen=True)
class MemberMonth:
    month: date
    calls: int
    credits: int


def month_started(org: Organisation, now: datetime | None = None) -> datetime:
    return datetime.combine(month_of(org, now), time.min, tzinfo=ZoneInfo(org.time_zone))


def get_member_month(*, org: Organisation, user: User, now: datetime | None = None) -> MemberMonth:
    """One member's calls this month and the credits they cost, from the call records."""
    since = month_started(org, now)
    totals = ToolCall.objects.filter(org=org, user=user, started_at__gte=since, started_at__lt=renews_at(org, now))
    figures = totals.aggregate(calls=Count("id"), credits=Sum("credits"))
    return MemberMonth(month=month_of(org, now), calls=figures["calls"], credits=figures["credits"] or 0)


def local_now(org: Organisation) -> datetime:
    return timezone.localtime(timezone.now(), ZoneInfo(org.time_zone))
