"""Knowledge with an owner on the pages: the document page sets the steward and says "Still correct",
the search page and the To review page show what is stale, the Add knowledge form names a steward,
the overview counts by category, and the admin sets both through the service."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from brain.core.reviews import review_due_on
from brain.models import Category, Membership
from brain.tests.admin_client import logged_in, make_org_admin
from conftest import make_actor, make_user
from memory.documents.stewardship import set_document_review
from memory.models import Document
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

TEXT = "The onboarding buddy of every new hire is named by their team lead on the first day."


def _overdue(document: Document) -> str:
    document.refresh_from_db()
    document.verified_at = timezone.now() - timedelta(days=45)
    document.review_due_on = review_due_on(
        every_days=document.review_every_days,
        verified_at=document.verified_at,
        recorded_at=document.recorded_at,
        org=document.org,
    )
    document.save(update_fields=["verified_at", "review_due_on"])
    return f"{document.review_due_on:%Y-%m-%d}"


def test_the_adder_names_a_steward_on_the_document_page_who_then_says_still_correct(actor):
    document = save(actor, "Onboarding", TEXT)
    steward = make_user(actor.org, first_name="Priya")
    adder = logged_in(actor.user)
    page = adder.get(f"/memory/documents/{document.pk}/").content.decode()
    assert "Nobody looks after it yet" in page
    assert "Still correct" not in page

    adder.post(f"/memory/documents/{document.pk}/review/set/", {"steward": steward.pk, "review_every_days": "30"})
    due = _overdue(document)

    own = logged_in(steward)
    page = own.get(f"/memory/documents/{document.pk}/").content.decode()
    assert f"Stale: review was due on {due}" in page
    assert "Looked after by <strong>Priya" in page
    search = own.get("/memory/search/", {"q": "onboarding buddy"}).content.decode()
    assert search.count(f"Stale: review was due on {due}") == 2  # the answer card and its hit
    review = own.get("/memory/review/").content.decode()
    assert "1 document past its review date" in review

    own.post(f"/memory/documents/{document.pk}/review/verify/")

    assert "Stale:" not in own.get(f"/memory/documents/{document.pk}/").content.decode()
    assert "Stale:" not in own.get("/memory/search/", {"q": "onboarding buddy"}).content.decode()
    assert "Nothing is waiting for you" in own.get("/memory/review/").content.decode()


def test_a_bystander_can_neither_verify_nor_set(actor):
    document = save(actor, "Onboarding", TEXT)
    set_document_review(actor=actor, document_id=document.pk, steward_id=actor.user.pk, review_every_days=30)
    bystander = logged_in(make_user(actor.org))
    page = bystander.get(f"/memory/documents/{document.pk}/").content.decode()
    assert "Still correct" not in page
    assert 'name="review_every_days"' not in page
    bystander.post(f"/memory/documents/{document.pk}/review/set/", {"steward": "", "review_every_days": ""})
    bystander.post(f"/memory/documents/{document.pk}/review/verify/")
    document.refresh_from_db()
    assert (document.steward_id, document.review_every_days, document.verified_at) == (actor.user.pk, 30, None)


def test_a_document_the_member_cannot_read_is_not_found_for_review(actor, insider):
    minutes = save(insider, "Board minutes", "The board approved the budget.", category="board")
    answer = logged_in(actor.user).post(f"/memory/documents/{minutes.pk}/review/verify/")
    assert answer.status_code == 404


def test_the_add_knowledge_form_names_a_steward_and_an_interval(actor):
    steward = make_user(actor.org)
    client = logged_in(actor.user)
    client.post(
        f"/knowledge/add/?org={actor.org.slug}",
        {
            "kind": "text",
            "title": "Leave",
            "content": "Everyone has 28 days.",
            "category": "general",
            "scope": "shared",
            "steward": steward.pk,
            "review_every_days": "60",
        },
    )
    document = Document.objects.get(org=actor.org, title="Leave")
    assert (document.steward_id, document.review_every_days) == (steward.pk, 60)
    refused = client.post(
        f"/knowledge/add/?org={actor.org.slug}",
        {
            "kind": "text",
            "title": "Mine",
            "content": "My own note.",
            "category": "general",
            "scope": "personal",
            "steward": steward.pk,
            "review_every_days": "60",
        },
    )
    assert refused.status_code == 400
    assert "looked after by you" in refused.content.decode()


def test_the_overview_shows_what_is_unowned_or_stale_by_category(actor):
    owned = save(actor, "Onboarding", TEXT)
    save(actor, "Leave policy", "Everyone has 28 days of leave.")
    set_document_review(actor=actor, document_id=owned.pk, steward_id=actor.user.pk, review_every_days=30)
    due = _overdue(owned)
    admin = make_org_admin(actor.org)
    page = logged_in(admin).get(f"/overview/?org={actor.org.slug}").content.decode()
    assert "Owners and reviews" in page
    assert f"Stale: review was due on {due}" in page
    assert '<td data-label="Without a steward">1</td>' in page


def test_the_admin_sets_a_steward_through_the_service_and_refuses_one_who_cannot_read(actor, insider):
    admin = make_org_admin(actor.org)
    client = logged_in(admin)
    minutes = save(insider, "Board minutes", "The board approved the budget.", category="board")
    board = Category.objects.get(org=actor.org, slug="board")
    url = f"/admin/memory/document/{minutes.pk}/change/"
    form = {"category": board.pk, "scope": "shared", "owner": insider.user.pk, "review_every_days": "30"}
    refused = client.post(url, {**form, "steward": actor.user.pk})
    assert refused.status_code == 200
    assert "Choose a steward who can read this document." in refused.content.decode()
    client.post(url, {**form, "steward": insider.user.pk})
    minutes.refresh_from_db()
    assert (minutes.steward_id, minutes.review_every_days) == (insider.user.pk, 30)
    assert make_actor(actor.org, insider.user).role == Membership.MEMBER
