"""What search keeps per audience (keyword statistics, the speakers it knows) follows the rows at
once: a new speaker is known from their first message, and nothing withdrawn from an audience
(deleted, or moved where it may not read) still counts in what it is shown."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.db import connection

from brain.models import Category, Organisation
from conftest import make_actor, make_user
from memory.documents.placement import change_document_access, delete_documents
from memory.graph.writes import FactDraft, record_facts
from memory.index.candidates import access_and_time, audience_of, keyword_candidates, with_counters
from memory.models import Chunk, Fact, SearchEpoch
from memory.search.passages import search_chunks
from memory.search.speakers import known_speakers
from memory.tasks import ingest_document_task
from memory.tests.factories import said, save

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def search_access(actor):
    return access_and_time(actor, None)


def epoch(org: Organisation, owner: int = 0) -> tuple[int, int]:
    """The counters of an organisation's shared rows (or of one owner's personal ones)."""
    row = SearchEpoch.objects.filter(org_id=org.pk, owner_id=owner).first()
    return (row.speakers, row.withdrawn) if row else (0, 0)


def scores(actor, query: str) -> list[tuple[str, float]]:
    return [(h.text, round(h.score, 9)) for h in search_chunks(actor=actor, query=query, top_k=10, mode="keyword").hits]


@pytest.mark.django_db
def test_a_new_speaker_is_known_from_their_first_message(actor):
    said(actor, "Maya", "The pilot starts in May.", AT)
    assert known_speakers(search_access(actor)) == ["Maya"]  # now cached for this audience
    said(actor, "Zed Okafor", "I moved the pilot review to Thursday.", AT.replace(hour=10))
    assert known_speakers(search_access(actor)) == ["Maya", "Zed Okafor"]
    hits = search_chunks(actor=actor, query="What did Zed say about the pilot?", top_k=3).hits
    assert hits[0].speaker == "Zed Okafor"
    assert "speaker" in hits[0].ranks


@pytest.mark.django_db
def test_only_a_speaker_new_to_some_audience_moves_the_counter(actor):
    said(actor, "Maya", "The pilot starts in May.", AT)
    first = epoch(actor.org)
    said(actor, "Maya", "And ends in June.", AT.replace(hour=10))
    said(actor, "Maya", "A note to myself.", AT.replace(hour=11), scope="personal")  # shared ones cover her owner
    save(actor, "Handbook", "No speaker here.")
    assert epoch(actor.org) == first
    assert epoch(actor.org, actor.user.pk) == (0, 0)
    said(actor, "Ravi", "Mine alone.", AT.replace(hour=12), scope="personal")
    assert epoch(actor.org) == first  # only its owner can read it
    assert epoch(actor.org, actor.user.pk) == (1, 0)


@pytest.mark.django_db
def test_a_members_own_notes_change_what_is_cached_for_them_and_for_no_one_else(actor):
    said(actor, "Maya", "The pilot starts in May.", AT)
    other = make_actor(actor.org, make_user(actor.org))
    theirs, mine = (
        audience_of(search_access(other), with_speakers=True),
        audience_of(search_access(actor), with_speakers=True),
    )
    note = said(actor, "Someone New", "A note to myself about the pilot.", AT.replace(hour=10), scope="personal")
    delete_documents([note])
    assert audience_of(search_access(other), with_speakers=True) == theirs
    assert audience_of(search_access(actor), with_speakers=True) != mine


@pytest.mark.django_db
def test_many_passages_of_a_new_speaker_in_one_statement_still_count_as_new(actor):
    document = said(actor, "Maya", "The pilot starts in May.", AT)
    before = epoch(actor.org)
    chunk = Chunk.objects.get(document=document)
    fields = [f.attname for f in Chunk._meta.concrete_fields if not f.generated and not f.primary_key]
    values = {name: getattr(chunk, name) for name in fields}
    copies = [Chunk(**{**values, "ordinal": n, "speaker": "Quinn"}) for n in (1, 2, 3)]
    Chunk.objects.bulk_create(copies)
    assert epoch(actor.org)[0] == before[0] + 1


@pytest.mark.django_db
def test_a_speaker_whose_messages_are_gone_is_no_longer_known(actor):
    said(actor, "Maya", "The pilot starts in May.", AT)
    gone = said(actor, "Helena Quorvane", "The acquisition closes in June.", AT.replace(hour=10))
    assert known_speakers(search_access(actor)) == ["Helena Quorvane", "Maya"]
    delete_documents([gone])
    assert known_speakers(search_access(actor)) == ["Maya"]
    hits = search_chunks(actor=actor, query="What did Helena say about the acquisition?", top_k=3).hits
    assert all("speaker" not in h.ranks for h in hits)


@pytest.mark.django_db
def test_a_message_moved_where_a_member_may_not_read_leaves_no_trace_in_their_results(actor, insider):
    member = make_actor(actor.org, make_user(actor.org))
    for hour, text in enumerate(["The rollout of the billing service is on hold.", "Lunch is at noon today."]):
        said(actor, "Maya", text, AT.replace(hour=hour))
    text = "Billing rollout billing rollout: the buyer wants the billing team."
    secret = said(actor, "Helena Quorvane", text, AT.replace(hour=5))
    question = "What about the billing rollout?"
    scores(member, question), known_speakers(search_access(member))  # cached while the member could read it
    board = Category.objects.get(org=actor.org, slug="board")
    admin = dataclasses.replace(insider, role="admin")
    change_document_access(actor=admin, document_id=secret.pk, category=board, scope="shared", owner=None)
    seen = scores(member, question)
    assert known_speakers(search_access(member)) == ["Maya"]
    cache.clear()  # what the member gets must equal what a search with nothing cached gives
    assert seen == scores(member, question)
    assert all("Helena" not in text for text, _ in seen)


@pytest.mark.django_db
def test_a_deleted_fact_moves_the_counter_of_its_organisation_only(actor, other_org):
    document = save(actor, "Notes", "Priya leads the BigCo pilot.")
    record_facts(document=document, drafts=[FactDraft(statement="Priya leads the BigCo pilot.", subject="Priya")])
    assert Fact.objects.filter(org=actor.org).exists()
    others = epoch(other_org)
    withdrawn = epoch(actor.org)[1]
    Fact.objects.filter(org=actor.org).delete()
    assert epoch(actor.org)[1] == withdrawn + 1
    assert epoch(other_org) == others


@pytest.mark.django_db
def test_raw_sql_and_deleting_the_organisation_go_through_the_same_counters(actor):
    said(actor, "Maya", "The pilot starts in May.", AT)
    before = epoch(actor.org)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_chunk SET scope = 'personal', owner_id = %s WHERE org_id = %s", [actor.user.pk, actor.org.pk]
        )
    assert epoch(actor.org)[1] == before[1] + 1
    org_id = actor.org.pk
    Organisation.objects.filter(pk=org_id).delete()
    assert not Chunk.objects.filter(org_id=org_id).exists()


@pytest.mark.django_db
def test_a_word_nobody_had_written_is_found_as_soon_as_its_document_is_ingested(actor):
    assert scores(actor, "quillfeather") == []  # searched before anyone wrote it, or anything at all
    document = save(actor, "Supplier", "Quillfeather is our new paper supplier.", ingest=False)
    assert ingest_document_task.apply(args=[document.pk]).get() == "ready"
    assert [text for text, _ in scores(actor, "quillfeather")] == ["Quillfeather is our new paper supplier."]
    # Weighed against the rows counted with it, not the empty memory cached before it came.
    [(_, bm25)] = keyword_candidates("quillfeather", with_counters(search_access(actor)), 5)
    assert bm25 > 0
