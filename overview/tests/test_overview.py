"""The overview's figures: local days, percentiles from PostgreSQL, what is counted and what is
hidden, and a fixed number of queries however much there is."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from brain.models import Organisation, ToolCall
from conftest import make_actor, make_org, make_user
from contacts.models import Contact, HumanRequest
from memory.models import Document
from overview.selectors import get_overview, list_overview_organisations, sees_overview
from overview.tests.overview_data import called, failed, missed
from registers.common import general_category
from registers.models import Commitment, Contradiction
from registers.tests.helpers import switch_on
from skills.models import Skill, SkillVersion

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def in_zone(zone: str) -> Organisation:
    org = make_org()
    Organisation.objects.filter(pk=org.pk).update(time_zone=zone)
    org.refresh_from_db()
    return org


def test_the_thirty_days_are_the_organisations_own_days_ending_today():
    org = in_zone("America/Los_Angeles")
    called(org, datetime(2026, 3, 10, 6, 0, tzinfo=UTC))  # 23:00 on 9 March in Los Angeles
    called(org, datetime(2026, 3, 10, 9, 0, tzinfo=UTC))  # 02:00 on 10 March
    called(org, NOW - timedelta(days=40))  # before the window

    days = get_overview(org=org, now=NOW).days

    assert len(days) == 30
    assert (days[0].day, days[-1].day) == (date(2026, 2, 19), date(2026, 3, 20))
    totals = {d.day: d.total for d in days if d.total}
    assert totals == {date(2026, 3, 9): 1, date(2026, 3, 10): 1}


def test_calls_are_counted_per_day_and_tool_with_credits_and_errors():
    org = make_org()
    day = NOW - timedelta(days=2)
    called(org, day, "search_company_memory", n=3, credits=1)
    called(org, day, "ask_company_memory", n=2, outcome=ToolCall.ERROR, error_code="internal")
    called(org, day, "remember", credits=2, outcome=ToolCall.REFUSED)

    figures = next(d for d in get_overview(org=org, now=NOW).days if d.day == day.date())

    assert figures.calls == {"search_company_memory": 3, "ask_company_memory": 2, "remember": 1}
    assert (figures.credits, figures.errors) == (5, 2)


def test_latency_percentiles_are_computed_by_the_database_over_the_calls_that_ran():
    org = make_org()
    day = NOW - timedelta(days=1)
    for ms in range(1, 101):
        called(org, day, duration_ms=float(ms))
    called(org, day, duration_ms=60_000.0, outcome=ToolCall.REFUSED, n=50)  # never ran

    figures = next(d for d in get_overview(org=org, now=NOW).days if d.day == day.date())

    assert figures.p50_ms == pytest.approx(50.5)
    assert figures.p95_ms == pytest.approx(95.05)
    today = get_overview(org=org, now=NOW).days[-1]
    assert (today.p50_ms, today.p95_ms) == (None, None)


def test_the_top_users_are_ranked_by_calls_with_the_credits_they_spent():
    org = make_org()
    ana = make_user(org, first_name="Ana", last_name="Ruiz")
    bo = make_user(org, username="bo")
    called(org, NOW, user=ana, n=2, credits=1)
    called(org, NOW, user=bo, n=5)
    called(org, NOW - timedelta(days=31), user=ana, n=50)  # outside the 30 days

    top = get_overview(org=org, now=NOW).top_users

    assert [(u.name, u.calls, u.credits) for u in top] == [("bo", 5, 0), ("Ana Ruiz", 2, 2)]


def test_documents_are_counted_by_status_and_personal_ones_stay_their_owners():
    org = make_org()
    actor = make_actor(org)
    failed(actor, "Broken export")
    failed(actor, "My own notes", scope="personal")
    queued = make_actor(org)
    from memory.documents.saving import add_document

    add_document(actor=queued, title="Fresh", content="new things")

    overview = get_overview(org=org, now=NOW)

    assert overview.documents == {"queued": 1, "waiting": 0, "processing": 0, "ready": 0, "failed": 1}
    assert [d.title for d in overview.failed] == ["Broken export"]
    assert overview.failed[0].error == "the parser gave up"


def test_the_newest_twenty_failed_documents_are_listed():
    org = make_org()
    actor = make_actor(org)
    for n in range(22):
        document = failed(actor, f"Export {n}")
        Document.objects.filter(pk=document.pk).update(recorded_at=NOW - timedelta(hours=22 - n))

    listed = get_overview(org=org, now=NOW).failed

    assert [d.title for d in listed] == [f"Export {n}" for n in range(21, 1, -1)]


def test_waiting_work_is_counted_and_registers_only_when_switched_on():
    org = make_org()
    member = make_user(org)
    skill = Skill.objects.create(org=org, slug="onboarding")
    SkillVersion.objects.create(skill=skill, name="Onboarding", content="Do this.")
    SkillVersion.objects.create(skill=skill, name="Onboarding", content="Old.", status=SkillVersion.Status.APPROVED)
    contact = Contact.objects.create(org=org, name="Farah", topics="budgets", email="f@example.com", channels=["email"])
    for status in ("queued", "sent", "answered", "failed"):
        HumanRequest.objects.create(org=org, requester=member, contact=contact, channel="email", question="?",
                                    status=status)  # fmt: skip
    Contradiction.objects.create(org=org, about="price", question="Which?", claim_a="a", source_a="x", claim_b="b",
                                 source_b="y")  # fmt: skip
    general = general_category(org)
    today = NOW.date()
    for due in (today - timedelta(days=1), today, None):
        Commitment.objects.create(org=org, category=general, owner_name="Priya", what="send", due_on=due,
                                  promised_on=today - timedelta(days=9))  # fmt: skip

    off = get_overview(org=org, now=NOW)
    switch_on(org, "contradictions", "commitments")
    on = get_overview(org=org, now=NOW)

    assert (off.skills_waiting, off.open_requests) == (1, 2)
    assert (off.open_contradictions, off.overdue_commitments) == (None, None)
    assert (on.open_contradictions, on.overdue_commitments) == (1, 1)


def test_the_paused_flag_and_the_questions_that_found_nothing():
    org = make_org()
    Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=timezone.now())
    for n in range(22):
        missed(org, f"question {n}", at=NOW - timedelta(minutes=22 - n))

    overview = get_overview(org=org, now=NOW)

    assert overview.paused
    assert [m.question for m in overview.misses][:2] == ["question 21", "question 20"]
    assert len(overview.misses) == 20


def test_nothing_of_another_organisation_is_counted():
    org, other = make_org(), make_org()
    called(other, NOW, n=7, credits=1, user=make_user(other))
    failed(make_actor(other), "Theirs")
    missed(other, "their question")

    overview = get_overview(org=org, now=NOW)

    assert sum(d.total for d in overview.days) == 0
    assert (overview.top_users, overview.failed, overview.misses) == ([], [], [])
    assert overview.documents["failed"] == 0


def test_the_overview_costs_the_same_few_queries_however_many_days_have_calls():
    org = make_org()
    get_overview(org=org, now=NOW)  # the account is made on first use
    with CaptureQueriesContext(connection) as empty:
        get_overview(org=org, now=NOW)
    user = make_user(org)
    for back in range(30):
        called(org, NOW - timedelta(days=back), f"tool_{back % 7}", user=user, n=3, duration_ms=float(back))
    missed(org, "anything")
    failed(make_actor(org), "Broken")
    with CaptureQueriesContext(connection) as full:
        get_overview(org=org, now=NOW)
    assert len(full) == len(empty)
    assert len(full) <= 9, "\n".join(q["sql"][:200] for q in full.captured_queries)


def test_operators_see_every_organisation_and_admins_only_their_own():
    org, other = make_org(), make_org()
    admin = make_user(org, role="admin")
    member = make_user(org)
    operator = make_user(is_superuser=True)  # type: ignore[arg-type]

    assert list(list_overview_organisations(user=admin)) == [org]
    assert list(list_overview_organisations(user=member)) == []
    assert set(list_overview_organisations(user=operator)) >= {org, other}
    assert (sees_overview(user=admin), sees_overview(user=member), sees_overview(user=operator)) == (True, False, True)
