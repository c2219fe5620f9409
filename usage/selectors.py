"""Reads of usage: an organisation's month and one member's month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db.models import Count, Sum
from django.utils import timezone

from brain.models import Organisation, ToolCall
from usage.metering import get_account, is_charging, month_of, renews_at
from usage.models import Month


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


def get_usage(*, org: Organisation, now: datetime | None = None) -> Usage:
    account = get_account(org, fresh=True)
    month = month_of(org, now)
    row = Month.objects.filter(org=org, month=month).first() or Month(org=org, month=month)
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
