"""The figures of the admins' overview page, for one organisation at a time.

Who may see it: an organisation's admins (the admin role in a membership) see their own
organisations; operators (superusers) see every organisation. What the Django admin hides from
everyone is hidden here too: personal documents, personal commitments and contradictions that
touch a personal memory belong to their owners, so they are neither counted nor listed.

The page costs a fixed number of queries whatever the amount of data: one for every count, one
for the failed documents, two for the thirty days (calls per tool; credits, errors and latency
percentiles computed by PostgreSQL), one for the top users, one for the questions that found
nothing, and the month's usage. The thirty days are calendar days of the organisation's time
zone and read through the (org, started_at) index.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, F, FloatField, IntegerField, Q, QuerySet, Subquery, Sum
from django.db.models.aggregates import Aggregate
from django.db.models.functions import TruncDate
from django.utils import timezone

from brain.core.selectors import administers_any, list_administered_organisations
from brain.models import Organisation, ToolCall
from contacts.models import HumanRequest
from memory.access import current, outside_trash
from memory.models import Document, Scope
from registers.contradictions.services import without_personal
from registers.models import Commitment, Contradiction
from skills.models import SkillVersion
from usage.models import Miss
from usage.selectors import Usage, get_usage

DAYS = 30
FAILED_SHOWN = 20
TOP_USERS = 10
MISSES_SHOWN = 20
STATUSES = [s.value for s in Document.Status]
OPEN_REQUESTS = [
    HumanRequest.Status.QUEUED,
    HumanRequest.Status.SENDING,
    HumanRequest.Status.SENT,
    HumanRequest.Status.DELIVERED,
]
MISS_FIELDS = ("tool", "question", "at", "user__username", "user__first_name", "user__last_name")
RAN = [ToolCall.OK, ToolCall.ERROR]  # refused and denied calls never ran: their speed says nothing


# --- who sees it ------------------------------------------------------------------------------


def list_overview_organisations(*, user: User) -> QuerySet[Organisation]:
    """The organisations whose overview ``user`` may open: all for an operator, else those they admin."""
    return list_administered_organisations(user=user)


def sees_overview(*, user: User | AnonymousUser) -> bool:
    """Whether the menus link to the overview: an operator, or an admin of some organisation."""
    return administers_any(user=user)


# --- what it shows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Day:
    day: date
    calls: dict[str, int]  # tool -> calls that day
    credits: int
    errors: int
    p50_ms: float | None  # None when no call ran that day
    p95_ms: float | None

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True)
class TopUser:
    name: str
    calls: int
    credits: int


@dataclass(frozen=True)
class Overview:
    org: Organisation
    paused: bool
    usage: Usage
    documents: dict[str, int]  # status -> current shared documents
    failed: list[Document]
    skills_waiting: int
    open_requests: int
    open_contradictions: int | None  # None while the register is off
    overdue_commitments: int | None
    days: list[Day]
    top_users: list[TopUser]
    misses: list[Miss]

    @property
    def out_of_credits(self) -> bool:
        return self.usage.out_of_credits


def get_overview(*, org: Organisation, now: datetime | None = None) -> Overview:
    now = now or timezone.now()
    counts = _counts(org, today=timezone.localtime(now, ZoneInfo(org.time_zone)).date())
    first, end = window(org, now)
    return Overview(
        org=org,
        paused=counts["paused_at"] is not None,
        usage=get_usage(org=org, now=now),
        documents={status: counts[f"count_{status}"] for status in STATUSES},
        failed=list_failed_documents(org=org),
        skills_waiting=counts["count_skills"],
        open_requests=counts["count_requests"],
        open_contradictions=counts["count_contradictions"] if counts["contradictions_on"] else None,
        overdue_commitments=counts["count_overdue"] if counts["commitments_on"] else None,
        days=usage_days(org=org, first=first, end=end),
        top_users=top_users(org=org, first=first, end=end),
        misses=list_misses(org=org),
    )


def window(org: Organisation, now: datetime, days: int = DAYS) -> tuple[date, datetime]:
    """The first of the last ``days`` local days (today included), and the end of today, local."""
    today = timezone.localtime(now, ZoneInfo(org.time_zone)).date()
    return today - timedelta(days=days - 1), local_midnight(org, today + timedelta(days=1))


def local_midnight(org: Organisation, day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(org.time_zone))


def list_failed_documents(*, org: Organisation, limit: int = FAILED_SHOWN) -> list[Document]:
    """The newest failed documents, with their error; retried from the overview page."""
    failed = _current_shared_documents(org).filter(status=Document.Status.FAILED).order_by("-recorded_at", "-pk")
    return list(failed.only("id", "org_id", "title", "error", "attempts", "source_kind", "recorded_at")[:limit])


def list_misses(*, org: Organisation, limit: int = MISSES_SHOWN) -> list[Miss]:
    """The latest questions that found no evidence, with who asked."""
    misses = Miss.objects.filter(org=org).select_related("user").order_by("-at", "-pk")
    return list(misses.only(*MISS_FIELDS)[:limit])


def usage_days(*, org: Organisation, first: date, end: datetime) -> list[Day]:
    """Each local day from ``first`` to the day before ``end``, days without calls included."""
    calls = _calls_since(org, first, end).annotate(day=_local_day(org))
    per_tool: dict[date, dict[str, int]] = {}
    for counted in calls.values("day", "tool").annotate(n=Count("id")).order_by():
        per_tool.setdefault(counted["day"], {})[counted["tool"]] = counted["n"]
    figures = calls.values("day").annotate(
        credits=Sum("credits"),
        errors=Count("id", filter=Q(outcome=ToolCall.ERROR)),
        p50=PercentileCont("duration_ms", fraction=0.5, filter=Q(outcome__in=RAN)),
        p95=PercentileCont("duration_ms", fraction=0.95, filter=Q(outcome__in=RAN)),
    )
    by_day = {figure["day"]: figure for figure in figures.order_by()}
    days = []
    for offset in range((end.astimezone(ZoneInfo(org.time_zone)).date() - first).days):
        day = first + timedelta(days=offset)
        row: dict[str, Any] = by_day.get(day, {})
        days.append(
            Day(
                day=day,
                calls=per_tool.get(day, {}),
                credits=row.get("credits") or 0,
                errors=row.get("errors") or 0,
                p50_ms=row.get("p50"),
                p95_ms=row.get("p95"),
            )
        )
    return days


def top_users(*, org: Organisation, first: date, end: datetime, limit: int = TOP_USERS) -> list[TopUser]:
    rows = (
        _calls_since(org, first, end)
        .filter(user__isnull=False)
        .values("user_id", "user__username", "user__first_name", "user__last_name")
        .annotate(calls=Count("id"), spent=Sum("credits"))
        .order_by("-calls", "user__username")[:limit]
    )
    return [
        TopUser(
            name=f"{row['user__first_name']} {row['user__last_name']}".strip() or row["user__username"],
            calls=row["calls"],
            credits=row["spent"] or 0,
        )
        for row in rows
    ]


# --- how ----------------------------------------------------------------------------------------


class PercentileCont(Aggregate):
    """PostgreSQL's ``percentile_cont``: the value ``fraction`` of the way through the sorted rows,
    interpolated, computed in the database over each group."""

    function = "percentile_cont"
    output_field = FloatField()

    def __init__(self, expression: str, *, fraction: float, **extra: Any) -> None:
        if not 0 <= fraction <= 1:
            raise ValueError(f"a percentile is a fraction between 0 and 1, not {fraction!r}")
        super().__init__(expression, **extra)
        # A float formatted by Python, never text from outside: safe to place in the SQL.
        self.template = f"%(function)s({float(fraction)!r}) WITHIN GROUP (ORDER BY %(expressions)s)"


class CountOf(Subquery):
    """How many rows a queryset has, as a scalar subquery: many counts in one query."""

    template = "(SELECT count(*) FROM (%(subquery)s) AS counted)"
    output_field = IntegerField()

    def __init__(self, queryset: QuerySet[Any], **extra: Any) -> None:
        super().__init__(queryset.order_by().values("pk"), **extra)


def _calls_since(org: Organisation, first: date, end: datetime) -> QuerySet[ToolCall]:
    return ToolCall.objects.filter(org=org, started_at__gte=local_midnight(org, first), started_at__lt=end)


def _local_day(org: Organisation) -> TruncDate:
    return TruncDate("started_at", tzinfo=ZoneInfo(org.time_zone))


def _current_shared_documents(org: Organisation) -> QuerySet[Document]:
    return Document.objects.filter(current(), outside_trash(), org=org, scope=Scope.SHARED)


def _counts(org: Organisation, *, today: date) -> dict[str, Any]:
    documents = _current_shared_documents(org)
    contradictions = without_personal(Contradiction.objects.filter(org=org, state=Contradiction.State.OPEN))
    overdue = Commitment.objects.filter(org=org, scope=Scope.SHARED, state=Commitment.State.OPEN, due_on__lt=today)
    counted = {
        **{f"count_{status}": CountOf(documents.filter(status=status)) for status in STATUSES},
        "count_skills": CountOf(SkillVersion.objects.filter(skill__org=org, status=SkillVersion.Status.PENDING)),
        "count_requests": CountOf(HumanRequest.objects.filter(org=org, status__in=OPEN_REQUESTS)),
        "count_contradictions": CountOf(contradictions),
        "count_overdue": CountOf(overdue),
    }
    row = Organisation.objects.filter(pk=org.pk).values(
        paused_at=F("ingestion_paused_at"),
        contradictions_on=F("features__contradictions"),
        commitments_on=F("features__commitments"),
        **counted,
    )
    return dict(row.get())
