"""Plan rules at their edges: the allowance, zero credits, never-billed tools, remember's price,
refusals that cost nothing, unlimited plans, and the month in the organisation's own time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings

from brain.core.services import bootstrap, create_organisation
from brain.mcp.invoke import execute
from brain.mcp.prices import FREE, KNOWLEDGE, READ, REMEMBER
from brain.mcp.registry import TOOLS
from brain.models import AuditRecord, ToolCall
from conftest import make_actor, make_org
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.models import Document
from usage.metering import OutOfCredits, charge, month_of, renews_at
from usage.models import Account, Month, Plan
from usage.selectors import get_member_month, get_usage
from usage.services import add_credits, change_plan

pytestmark = pytest.mark.django_db

SEARCH = {"query": "anything at all"}
NEVER_BILLED = ["forget", "health", "init", "get_profile", "report_issue", "send_feedback"]


def at_edge(org: Any, *, free_left: int, credits: int) -> None:
    """Put this month's allowance ``free_left`` short of its end and the balance at ``credits``."""
    plan = Account.objects.get(org=org).plan
    Month.objects.update_or_create(
        org=org, month=month_of(org), defaults={"free_used": plan.monthly_free_reads - free_left}
    )
    Account.objects.filter(org=org).update(credits=credits)


def run(actor: Any, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    return execute(actor, TOOLS[tool], arguments or {})


def test_a_new_organisation_is_on_the_free_plan_with_a_thousand_free_reads(db):
    usage = get_usage(org=create_organisation(slug="new", name="New"))
    assert (usage.plan, usage.monthly_free_reads, usage.credits, usage.free_left) == ("free", 1000, 0, 1000)
    assert not usage.unlimited
    assert not usage.out_of_credits


def test_the_first_organisation_bootstrap_makes_is_unlimited(db):
    made = bootstrap(org_slug="first", org_name="First", admin_username="boss", admin_email="boss@example.com")
    assert get_usage(org=made.org).unlimited


def test_reads_are_free_up_to_the_allowance_then_cost_one_credit_then_are_refused(actor):
    at_edge(actor.org, free_left=1, credits=1)

    outcomes = [run(actor, "search_company_memory", SEARCH) for _ in range(3)]

    assert [o.code for o in outcomes] == ["", "", "out_of_credits"]
    assert outcomes[2].status == 402
    calls = list(ToolCall.objects.filter(org=actor.org).order_by("pk").values_list("outcome", "credits", "error_code"))
    assert calls == [("ok", 0, ""), ("ok", 1, ""), ("refused", 0, "out_of_credits")]
    usage = get_usage(org=actor.org)
    assert (usage.free_left, usage.credits, usage.credits_spent, usage.reads) == (0, 0, 1, 2)
    assert usage.out_of_credits


def test_the_refusal_tells_the_assistant_to_tell_the_user_and_how_credits_are_added(actor):
    at_edge(actor.org, free_left=0, credits=0)
    message = run(actor, "search_company_memory", SEARCH).message
    assert "Tell the user" in message
    assert f"manage.py credits --org {actor.org.slug} add" in message
    assert renews_at(actor.org).strftime("%Y-%m-%d") in message


@pytest.mark.parametrize("tool", NEVER_BILLED)
def test_never_billed_tools_run_at_zero_credits(actor, tool):
    at_edge(actor.org, free_left=0, credits=0)
    arguments = {
        "forget": {"memory_id": "mem_1"},
        "report_issue": {"summary": "Search was slow", "category": "tool_error"},
        "send_feedback": {"summary": "More dates please"},
    }.get(tool, {})
    outcome = run(actor, tool, arguments)
    assert outcome.code != "out_of_credits", outcome.message
    assert TOOLS[tool].billing == FREE
    assert ToolCall.objects.get(org=actor.org, tool=tool).credits == 0


def test_every_tool_has_a_known_price_and_only_remember_and_saving_knowledge_differ():
    marks = {name: spec.billing for name, spec in TOOLS.items()}
    assert marks["remember"] == REMEMBER
    assert marks["add_company_knowledge"] == KNOWLEDGE
    assert set(NEVER_BILLED) <= {name for name, mark in marks.items() if mark == FREE}


def test_remember_costs_two_credits_and_never_comes_from_the_allowance(actor):
    at_edge(actor.org, free_left=500, credits=3)

    first = run(actor, "remember", {"content": "Our fiscal year starts in April."})
    second = run(actor, "remember", {"content": "The office closes at six."})

    assert first.code == ""
    assert second.code == "out_of_credits"
    assert "costs 2 credits" in second.message
    usage = get_usage(org=actor.org)
    assert (usage.credits, usage.free_left) == (1, 500)
    assert list(ToolCall.objects.filter(tool="remember").order_by("pk").values_list("credits", flat=True)) == [2, 0]


def test_a_call_that_fails_is_not_charged(actor):
    at_edge(actor.org, free_left=0, credits=5)

    invalid = run(actor, "search_company_memory", {"query": ""})
    refused = run(actor, "skills_get", {"slug": "no-such-skill"})

    assert invalid.code == "invalid_argument"
    assert refused.output is None
    assert get_usage(org=actor.org).credits == 5
    assert set(ToolCall.objects.filter(org=actor.org).values_list("credits", flat=True)) == {0}


def test_an_unlimited_plan_counts_but_never_charges_or_refuses(actor):
    change_plan(actor=None, org=actor.org, plan=Plan.UNLIMITED)
    at_edge(actor.org, free_left=0, credits=0)
    for _ in range(3):
        assert run(actor, "search_company_memory", SEARCH).code == ""
    assert get_usage(org=actor.org).reads == 3
    assert AuditRecord.objects.filter(org=actor.org, action="plan.changed").exists()


@override_settings(BRAIN_METERING=False)
def test_with_metering_switched_off_nothing_is_refused(actor):
    at_edge(actor.org, free_left=0, credits=0)
    assert run(actor, "search_company_memory", SEARCH).code == ""


def test_the_month_is_the_calendar_month_of_the_organisations_time_zone(db):
    org = make_org()
    org.time_zone = "Pacific/Auckland"  # UTC+13 in December
    org.save()
    end_of_november_utc = datetime(2026, 11, 30, 10, 30, tzinfo=UTC)  # 23:30 on 30 November there
    december_there = datetime(2026, 11, 30, 11, 30, tzinfo=UTC)  # 00:30 on 1 December there

    assert month_of(org, end_of_november_utc) == date(2026, 11, 1)
    assert month_of(org, december_there) == date(2026, 12, 1)
    assert renews_at(org, end_of_november_utc) == december_there.replace(minute=0)


def test_a_new_month_brings_a_new_allowance(db):
    org = make_org()
    org.time_zone = "America/New_York"
    org.save()
    november = datetime(2026, 11, 30, 12, tzinfo=UTC)
    december = datetime(2026, 12, 1, 5, 30, tzinfo=UTC)  # 00:30 local: December already
    Month.objects.create(org=org, month=date(2026, 11, 1), free_used=1000)
    Account.objects.filter(org=org).update(credits=0)

    with pytest.raises(OutOfCredits):
        charge(org=org, price=READ, now=november)
    spent = charge(org=org, price=READ, now=december)

    assert (spent.month, spent.free) == (date(2026, 12, 1), 1)


def test_knowledge_saved_while_out_of_credits_waits_and_says_so_then_queues_when_credits_arrive(actor):
    at_edge(actor.org, free_left=0, credits=0)

    outcome = run(actor, "add_company_knowledge", {"title": "Holidays", "content": "We close in August."})

    assert outcome.code == ""
    assert "waiting" in outcome.output.detail
    assert "few minutes" not in outcome.output.detail
    document = Document.objects.get(org=actor.org, title="Holidays")
    assert document.status == Document.Status.WAITING
    add_credits(actor=None, org=actor.org, amount=10)
    document.refresh_from_db()
    assert document.status == Document.Status.QUEUED


def test_knowledge_saved_with_credits_left_is_queued_with_the_usual_confirmation(actor):
    outcome = run(actor, "add_company_knowledge", {"title": "Holidays", "content": "We close in August."})
    assert "few minutes" in outcome.output.detail
    assert Document.objects.get(org=actor.org).status == Document.Status.QUEUED


def test_credits_can_be_taken_away_but_never_below_zero(org):
    Account.objects.filter(org=org).update(credits=0)
    add_credits(actor=None, org=org, amount=5)
    assert add_credits(actor=None, org=org, amount=-3) == 2
    with pytest.raises(Exception, match="below zero"):
        add_credits(actor=None, org=org, amount=-3)
    assert get_usage(org=org).credits == 2


def test_a_members_month_counts_only_their_own_calls(actor):
    other = make_actor(actor.org)
    at_edge(actor.org, free_left=0, credits=10)
    run(actor, "search_company_memory", SEARCH)
    run(actor, "search_company_memory", SEARCH)
    run(other, "search_company_memory", SEARCH)

    mine = get_member_month(org=actor.org, user=actor.user)

    assert (mine.calls, mine.credits) == (2, 2)


def test_the_credits_command_adds_and_shows(org, capsys):
    Account.objects.filter(org=org).update(credits=0)
    call_command("credits", "--org", org.slug, "add", "250")
    call_command("credits", "--org", org.slug, "show")
    out = capsys.readouterr().out
    assert "250" in out
    assert "free" in out.lower()
    assert get_usage(org=org).credits == 250


def test_the_credits_command_changes_the_plan(org, capsys):
    call_command("credits", "--org", org.slug, "plan", "unlimited")
    assert get_usage(org=org).unlimited


def test_what_remember_stores_is_ingested_even_when_usage_then_runs_out(actor):
    at_edge(actor.org, free_left=0, credits=2)
    assert run(actor, "remember", {"content": "Our fiscal year starts in April."}).code == ""
    document = Document.objects.get(org=actor.org, source_kind="remember")
    assert document.status == Document.Status.QUEUED  # the call paid for it; it does not wait
    assert ingest_document(document_id=document.pk) == "ready"


def test_a_queued_document_waits_if_usage_runs_out_before_a_worker_takes_it(actor):
    saved = add_document(actor=actor, title="Rota", content="Ana covers Mondays.")
    at_edge(actor.org, free_left=0, credits=0)

    assert ingest_document(document_id=saved.document.pk) == "skipped"
    saved.document.refresh_from_db()
    assert saved.document.status == Document.Status.WAITING
    add_credits(actor=None, org=actor.org, amount=1)
    assert ingest_document(document_id=saved.document.pk) == "ready"


def test_ingestion_itself_costs_nothing_whatever_the_size(actor):
    at_edge(actor.org, free_left=0, credits=1)
    saved = add_document(actor=actor, title="Handbook", content="Long text. " * 20_000)
    assert ingest_document(document_id=saved.document.pk) == "ready"
    usage = get_usage(org=actor.org)
    assert (usage.credits, usage.free_left, usage.reads) == (1, 0, 0)
