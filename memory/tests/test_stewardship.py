"""Knowledge with an owner: a document's steward and review interval, "Still correct", what is stale,
the steward's Needs-you, the tools' stale marks, and nobody learning of a document they cannot read."""

from __future__ import annotations

from datetime import date, timedelta
from typing import cast

import pytest
from django.utils import timezone

from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.needs import list_waiting_work
from brain.core.reviews import review_due_on, stale_since, today
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import AuditRecord, Category, Membership
from conftest import make_actor, make_org, make_user
from memory.documents.stewardship import (
    review_by_category,
    set_document_review,
    stale_among,
    stale_documents,
    verify_document,
)
from memory.mcp_tools.ask import AskOut
from memory.mcp_tools.documents import SearchOut
from memory.models import Document
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

TEXT = "The onboarding buddy of every new hire is named by their team lead on the first day."


def _overdue(document: Document, days_ago: int = 40) -> Document:
    """Its last verification moved into the past, as time passing would: the due day follows."""
    document.refresh_from_db()
    document.verified_at = timezone.now() - timedelta(days=days_ago)
    document.review_due_on = review_due_on(
        every_days=document.review_every_days,
        verified_at=document.verified_at,
        recorded_at=document.recorded_at,
        org=document.org,
    )
    document.save(update_fields=["verified_at", "review_due_on"])
    return document


def test_the_due_day_counts_from_the_last_verification_and_is_stale_only_once_passed(org):
    now = timezone.now()
    due = review_due_on(every_days=30, verified_at=now - timedelta(days=31), recorded_at=now, org=org)
    assert due == today(org) - timedelta(days=1)
    assert stale_since(due, on=today(org)) == due
    assert stale_since(today(org), on=today(org)) is None  # due today: not yet past
    assert review_due_on(every_days=None, verified_at=None, recorded_at=now, org=org) is None


def test_a_steward_is_named_and_verifying_starts_the_interval_again(actor):
    document = save(actor, "Onboarding", TEXT)
    steward = make_user(actor.org)
    document = set_document_review(actor=actor, document_id=document.pk, steward_id=steward.pk, review_every_days=30)
    assert document.review_due_on == today(actor.org) + timedelta(days=30)
    _overdue(document)
    as_steward = make_actor(actor.org, steward)
    assert [d.pk for d in stale_documents(actor=as_steward)] == [document.pk]

    verified = verify_document(actor=as_steward, document_id=document.pk)

    assert verified.review_due_on == today(actor.org) + timedelta(days=30)
    assert list(stale_documents(actor=as_steward)) == []
    actions = list(AuditRecord.objects.filter(target=document.public_id).values_list("action", flat=True))
    assert "document.review_changed" in actions
    assert "document.verified" in actions


def test_only_the_steward_or_an_admin_may_verify_and_only_the_adder_steward_or_admin_may_set(actor):
    document = save(actor, "Onboarding", TEXT)
    steward = make_user(actor.org)
    set_document_review(actor=actor, document_id=document.pk, steward_id=steward.pk, review_every_days=30)
    bystander = make_actor(actor.org, make_user(actor.org))
    with pytest.raises(PermissionDenied):
        verify_document(actor=bystander, document_id=document.pk)
    with pytest.raises(PermissionDenied):
        set_document_review(actor=bystander, document_id=document.pk, steward_id=None, review_every_days=None)
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    verify_document(actor=admin, document_id=document.pk)
    set_document_review(
        actor=make_actor(actor.org, steward), document_id=document.pk, steward_id="", review_every_days=""
    )
    assert Document.objects.get(pk=document.pk).review_due_on is None


def test_a_steward_who_cannot_read_the_document_is_refused(actor, insider):
    board = Category.objects.get(org=actor.org, slug="board")
    minutes = save(insider, "Board minutes", "The board approved the budget for the Leeds office.", category="board")
    with pytest.raises(InvalidArgument):
        set_document_review(actor=insider, document_id=minutes.pk, steward_id=actor.user.pk, review_every_days=30)
    outsider = make_user(make_org("elsewhere"))
    with pytest.raises(InvalidArgument):
        set_document_review(actor=insider, document_id=minutes.pk, steward_id=outsider.pk, review_every_days=30)
    assert board.pk == minutes.category_id
    for bad in ("0", "ten", 4000):
        with pytest.raises(InvalidArgument):
            set_document_review(actor=insider, document_id=minutes.pk, steward_id=None, review_every_days=bad)


def test_a_member_never_learns_of_a_stale_document_they_cannot_read(actor, insider):
    minutes = save(insider, "Board minutes", "The board approved the budget for the Leeds office.", category="board")
    set_document_review(actor=insider, document_id=minutes.pk, steward_id=insider.user.pk, review_every_days=10)
    due = _overdue(minutes).review_due_on
    assert stale_among(actor=insider, found=[minutes.pk]) == {minutes.pk: due}
    assert [w.words for w in list_waiting_work(user=insider.user)] == ["1 document past its review date"]
    assert list_waiting_work(user=actor.user) == []
    with pytest.raises(NotFound):
        verify_document(actor=actor, document_id=minutes.pk)
    # The steward later loses the group: it no longer waits for them either, nor shows as stale to them.
    insider.user.groups.clear()
    assert list_waiting_work(user=insider.user) == []
    outcome = cast(SearchOut, execute(actor, TOOLS["search_company_memory"], {"query": "board budget Leeds"}).output)
    assert all(hit.document_id != minutes.public_id for hit in outcome.hits)


def test_the_steward_sees_it_in_needs_you_with_a_link_to_the_review_page(actor):
    document = save(actor, "Onboarding", TEXT)
    set_document_review(actor=actor, document_id=document.pk, steward_id=actor.user.pk, review_every_days=30)
    assert list_waiting_work(user=actor.user) == []
    _overdue(document)

    waiting = list_waiting_work(user=actor.user)

    assert [(w.words, w.url) for w in waiting] == [
        ("1 document past its review date", f"/memory/review/?org={actor.org.slug}")
    ]
    assert list_waiting_work(user=make_user(actor.org)) == []  # another member: nothing of theirs waits


def test_the_search_and_ask_tools_mark_stale_evidence_and_only_it(actor):
    stale = save(actor, "Onboarding", TEXT)
    fresh = save(actor, "Onboarding checklist", "The onboarding buddy shows the new hire the office on day one.")
    set_document_review(actor=actor, document_id=stale.pk, steward_id=actor.user.pk, review_every_days=30)
    set_document_review(actor=actor, document_id=fresh.pk, steward_id=actor.user.pk, review_every_days=30)
    due = _overdue(stale).review_due_on

    search = cast(SearchOut, execute(actor, TOOLS["search_company_memory"], {"query": "onboarding buddy"}).output)
    marks = {hit.document_id: hit.stale_since for hit in search.hits}
    assert marks[stale.public_id] == due
    assert marks[fresh.public_id] is None
    assert f"stale: its review was due on {due:%Y-%m-%d}" in search.to_text()

    ask = cast(AskOut, execute(actor, TOOLS["ask_company_memory"], {"question": "Who is the onboarding buddy?"}).output)
    pages = {page.document_id: page.stale_since for page in ask.evidence}
    assert pages[stale.public_id] == due
    assert all(c.stale_since in (None, due) for c in ask.claims)
    assert ask.answer is not None
    said = [s for s in (ask.answer.answer, *ask.answer.others) if s is not None]
    assert said
    assert [s.stale_since for s in said] == [due if s.document_id == stale.public_id else None for s in said]
    assert ask.model_dump(mode="json")["evidence"][0].keys() >= {"stale_since"}


def test_the_tool_schemas_document_the_new_optional_field():
    for tool, path in (("search_company_memory", "SearchHitOut"), ("ask_company_memory", "EvidenceOut")):
        schema = TOOLS[tool].output.model_json_schema()
        field = schema["$defs"][path]["properties"]["stale_since"]
        assert "review" in field["description"]
        assert "stale_since" not in schema["$defs"][path].get("required", [])


def test_a_new_version_keeps_its_steward_and_a_category_gives_its_own(actor):
    steward = make_user(actor.org)
    Category.objects.create(org=actor.org, slug="policies", name="Policies", steward=steward, review_every_days=90)
    synced = save(
        actor, "Leave policy", "Everyone has 28 days of leave.", category="policies", external_id="wiki/leave"
    )
    assert (synced.steward_id, synced.review_every_days) == (steward.pk, 90)
    assert synced.review_due_on == today(actor.org) + timedelta(days=90)
    set_document_review(actor=actor, document_id=synced.pk, steward_id=actor.user.pk, review_every_days=14)
    again = save(actor, "Leave policy", "Everyone has 30 days of leave.", category="policies", external_id="wiki/leave")
    assert again.pk != synced.pk
    assert (again.steward_id, again.review_every_days) == (actor.user.pk, 14)


def test_the_overview_counts_unowned_and_stale_by_category(actor):
    owned = save(actor, "Onboarding", TEXT)
    save(actor, "Leave policy", "Everyone has 28 days of leave.")
    set_document_review(actor=actor, document_id=owned.pk, steward_id=actor.user.pk, review_every_days=30)
    _overdue(owned)
    rows = {row.category.slug: (row.documents, row.unowned, row.stale) for row in review_by_category(org=actor.org)}
    assert rows == {Category.DEFAULT_SLUG: (2, 1, 1)}
    assert isinstance(owned.review_due_on, date)
