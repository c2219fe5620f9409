"""The library pages and a member's changes to their own, through the Django test client: who
sees which documents and entities, who may delete, make personal or settle, and what the audit
trail keeps."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from brain.core.actors import Actor
from brain.models import AuditRecord, Category, Membership, Organisation
from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.placement import delete_document, make_document_personal, readers_of
from memory.documents.saving import add_document
from memory.models import Document, Entity
from registers.commitments.services import record_commitment
from registers.contradictions.nightly import scan_contradictions
from registers.models import Commitment, Contradiction
from registers.tests.helpers import stated, switch_on

pytestmark = pytest.mark.django_db


def saved(actor: Actor, title: str, content: str, **kw: Any) -> Document:
    document = add_document(actor=actor, title=title, content=content, **kw).document
    assert ingest_document(document_id=document.pk) == "ready"
    return document


def client_for(actor: Actor) -> Client:
    client = Client()
    client.force_login(actor.user)
    return client


@pytest.fixture
def team():
    org = make_org()
    ada = make_actor(org, make_user(org, role=Membership.ADMIN, username="ada", first_name="Ada"), via="web")
    mira = make_actor(org, make_user(org, username="mira", first_name="Mira"), via="web")
    omar = make_actor(org, make_user(org, username="omar", first_name="Omar"), via="web")
    return org, ada, mira, omar


def test_the_documents_page_hides_other_peoples_personal_documents_and_other_organisations(team):
    org, _, mira, omar = team
    saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    saved(omar, "Omar's diary", "I will ask for a raise in March.", scope="personal")
    elsewhere = make_org()
    saved(make_actor(elsewhere), "Rival pricing", "Their enterprise plan costs 9000 EUR.")

    page = client_for(mira).get(reverse("memory-documents"))
    assert page.status_code == 200
    titles = [d.title for d in page.context["documents"]]
    assert titles == ["Mira's shared plan"]
    assert b"Omar&#x27;s diary" not in page.content
    assert b"Rival pricing" not in page.content

    own = client_for(omar).get(reverse("memory-documents"))
    assert {d.title for d in own.context["documents"]} == {"Mira's shared plan", "Omar's diary"}


def test_the_documents_page_filters_sorts_and_pages_through_the_query_string(team):
    org, _, mira, _ = team
    for n in range(52):
        Document.objects.create(
            org=org,
            title=f"Note {n:02}",
            content="x",
            content_hash=f"h{n}",
            category=_general(org),
            owner=mira.user,
            source_kind="api" if n % 2 else "upload",
            status="ready",
        )
    client = client_for(mira)
    first = client.get(reverse("memory-documents"), {"sort": "title"})
    assert [d.title for d in first.context["documents"]][:2] == ["Note 00", "Note 01"]
    assert len(first.context["documents"]) == 50
    assert first.context["next_url"] == "?sort=title&page=2"
    second = client.get(reverse("memory-documents") + first.context["next_url"])
    assert [d.title for d in second.context["documents"]] == ["Note 50", "Note 51"]
    narrowed = client.get(reverse("memory-documents"), {"kind": "upload", "title": "Note 1", "sort": "-title"})
    assert [d.title for d in narrowed.context["documents"]][:2] == ["Note 18", "Note 16"]
    assert client.get(reverse("memory-documents"), {"status": "failed"}).context["documents"] == []


def _general(org: Organisation) -> Category:
    return Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)


def test_the_entities_directory_hides_an_entity_known_only_from_someone_elses_personal_document(team):
    org, _, mira, omar = team
    saved(mira, "Team", "Priya Shah works with Dana Lee on the Globex renewal.")
    saved(omar, "Omar's notes", "Quentin Vale works with Omar on the Initech bid.", scope="personal")
    elsewhere = make_org()
    saved(make_actor(elsewhere), "Rivals", "Zed Rivers works with Yuri Moss on the Umbrella deal.")
    hidden = Entity.objects.filter(org=org, name__icontains="Quentin")
    assert hidden.exists(), "the personal document names an entity"

    listed = client_for(mira).get(reverse("memory-entities"))
    names = {view.name for view, _ in listed.context["entities"]}
    assert "Priya Shah" in names
    assert not any("Quentin" in n or "Zed" in n or "Yuri" in n for n in names)
    assert b"Quentin" not in listed.content
    assert b"Zed Rivers" not in listed.content
    found = client_for(mira).get(reverse("memory-entities"), {"q": "priya"})
    assert [view.name for view, _ in found.context["entities"]] == ["Priya Shah"]
    assert client_for(mira).get(reverse("memory-entities"), {"q": "Quentin"}).context["entities"] == []
    assert "Quentin Vale" in {v.name for v, _ in client_for(omar).get(reverse("memory-entities")).context["entities"]}


def test_a_member_cannot_delete_or_make_personal_another_members_document(team):
    org, _, mira, omar = team
    plan = saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    client = client_for(omar)
    page = client.get(reverse("memory-document", args=[plan.pk]))
    assert b"Delete" not in page.content
    assert b"Make personal" not in page.content
    for name in ("memory-document-delete", "memory-document-make-personal"):
        assert client.get(reverse(name, args=[plan.pk])).status_code == 403
        assert client.post(reverse(name, args=[plan.pk])).status_code == 403
    assert Document.objects.filter(pk=plan.pk, scope="shared").exists()
    with pytest.raises(Exception, match="someone else"):
        delete_document(actor=omar, document_id=plan.pk)


def test_a_personal_document_of_someone_else_is_not_found_not_forbidden(team):
    org, ada, mira, _ = team
    diary = saved(mira, "Diary", "A private thought.", scope="personal")
    assert client_for(ada).post(reverse("memory-document-delete", args=[diary.pk])).status_code == 404
    other = make_actor(make_org())
    assert client_for(other).get(reverse("memory-document-delete", args=[diary.pk])).status_code == 404
    assert Document.objects.filter(pk=diary.pk).exists()


def test_the_adder_deletes_their_document_after_a_confirmation_that_says_who_reads_it(team):
    org, _, mira, _ = team
    plan = saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    client = client_for(mira)
    confirm = client.get(reverse("memory-document-delete", args=[plan.pk]))
    assert f"everyone in {org.name} (3 members)".encode() in confirm.content
    done = client.post(reverse("memory-document-delete", args=[plan.pk]))
    assert done.status_code == 302
    assert Document.objects.get(pk=plan.pk).trashed_at is not None  # in the trash, restorable
    record = AuditRecord.objects.get(org=org, action="document.deleted")
    assert (record.target, record.user, record.via) == (plan.public_id, mira.user, "web")


def test_an_admin_deletes_a_members_shared_document(team):
    org, ada, mira, _ = team
    plan = saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    assert client_for(ada).post(reverse("memory-document-delete", args=[plan.pk])).status_code == 302
    assert Document.objects.get(pk=plan.pk).trashed_at is not None  # in the trash, restorable
    assert AuditRecord.objects.filter(org=org, action="document.deleted", user=ada.user).exists()


def test_the_adder_makes_their_document_personal_and_others_stop_reading_it(team):
    org, ada, mira, omar = team
    plan = saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    assert client_for(ada).get(reverse("memory-document-make-personal", args=[plan.pk])).status_code == 403
    moved = make_document_personal(actor=mira, document_id=plan.pk)
    assert (moved.scope, moved.owner) == ("personal", mira.user)
    assert readers_of(moved) == "only mira"
    assert AuditRecord.objects.filter(org=org, action="document.access_changed", target=plan.public_id).exists()
    assert client_for(omar).get(reverse("memory-document", args=[plan.pk])).status_code == 404


def test_the_people_a_commitment_concerns_settle_it_with_a_note_and_others_are_refused(team):
    org, ada, mira, omar = team
    switch_on(org)
    promise = record_commitment(actor=omar, owner="Mira", what="Mira will send the quote to BigCo")
    url = reverse("registers-settle", args=[promise.pk])
    page = client_for(mira).get(reverse("registers"))
    assert url.encode() in page.content
    stranger = make_actor(org, make_user(org, username="sven"), via="web")
    assert client_for(stranger).post(url, {"status": "done", "note": "sent"}).status_code == 403
    assert url.encode() not in client_for(stranger).get(reverse("registers")).content
    client_for(mira).post(url, {"status": "done", "note": ""})
    assert Commitment.objects.get(pk=promise.pk).state == "open"  # the tools' rule: a note is required
    client_for(mira).post(url, {"status": "done", "note": "BigCo confirmed by mail on Monday"})
    promise.refresh_from_db()
    assert (promise.state, promise.note, promise.settled_by) == (
        "landed",
        "BigCo confirmed by mail on Monday",
        mira.user,
    )
    assert AuditRecord.objects.filter(org=org, action="commitment.updated", user=mira.user).exists()
    other = record_commitment(actor=omar, owner="Priya", what="Priya will call Initech")
    client_for(ada).post(reverse("registers-settle", args=[other.pk]), {"status": "dropped", "note": "deal lost"})
    assert Commitment.objects.get(pk=other.pk).state == "cancelled"


def test_another_organisations_commitment_is_not_found(team):
    org, _, mira, _ = team
    elsewhere = make_org()
    switch_on(elsewhere)
    theirs = record_commitment(actor=make_actor(elsewhere), owner="mira", what="Someone will do something")
    answer = client_for(mira).post(reverse("registers-settle", args=[theirs.pk]), {"status": "done", "note": "x"})
    assert answer.status_code == 404
    assert Commitment.objects.get(pk=theirs.pk).state == "open"


def test_the_overview_counts_link_to_what_they_count(team):
    org, ada, mira, _ = team
    saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    page = client_for(ada).get(reverse("overview"))
    assert f"{reverse('memory-documents')}?org={org.slug}&amp;status=ready".encode() in page.content
    assert f"{reverse('memory-entities')}?org={org.slug}".encode() in page.content


def test_a_member_answers_a_contradiction_they_read_from_the_registers_page(team, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    org, _, mira, omar = team
    switch_on(org, "contradictions")
    a = stated(omar, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    stated(omar, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    scan_contradictions(org)
    entry = Contradiction.objects.get(org=org)
    url = reverse("registers-answer", args=[entry.pk])
    assert url.encode() in client_for(mira).get(reverse("registers")).content
    outsider = make_actor(make_org(), via="web")
    assert client_for(outsider).get(url).status_code == 404
    label = "a" if entry.fact_a == a else "b"
    kept = client_for(mira).post(url, {"answer": label, "note": ""})
    assert kept.status_code == 200  # the form comes back: a note is required
    client_for(mira).post(url, {"answer": label, "note": "Billing shows 48500."})
    entry.refresh_from_db()
    assert (entry.state, entry.answer, entry.answered_by) == ("resolved", label, mira.user)
    assert AuditRecord.objects.filter(org=org, action="contradiction.answered", user=mira.user).exists()


def test_an_added_text_links_to_its_document(team):
    org, _, mira, _ = team
    plan = saved(mira, "Mira's shared plan", "The Lisbon office opens in June.")
    status = client_for(mira).get(reverse("add-knowledge-status", args=[plan.pk])).json()
    assert status["url"] == f"{reverse('memory-document', args=[plan.pk])}?org={org.slug}"


def test_deleting_a_document_takes_its_versions_the_member_added_and_leaves_a_colleagues(team):
    org, _, mira, omar = team
    first = saved(mira, "Handbook", "Holidays: 25 days.", external_id="handbook")
    second = saved(mira, "Handbook", "Holidays: 27 days.", external_id="handbook")
    third = saved(omar, "Handbook", "Holidays: 28 days.", external_id="handbook")
    assert {d.version for d in (first, second, third)} == {1, 2, 3}
    with pytest.raises(Exception, match="someone else"):
        make_document_personal(actor=mira, document_id=second.pk)
    delete_document(actor=mira, document_id=second.pk)
    assert list(Document.objects.filter(org=org, external_id="handbook", trashed_at__isnull=True)) == [third]
    assert set(Document.objects.filter(org=org, trashed_at__isnull=False)) == {first, second}
    record = AuditRecord.objects.get(org=org, action="document.deleted")
    assert record.details["versions"] == [first.public_id, second.public_id]
