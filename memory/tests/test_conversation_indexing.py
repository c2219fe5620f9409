"""Conversations stored as conversations: each turn cut as a passage with its speaker and time,
embedded with the turn before it, and embedded again when that turn changes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brain.core.actors import Actor
from brain.models import Category
from memory.documents.chunking import chunk, is_conversation
from memory.documents.turns import embedded_texts
from memory.models import Chunk, Document
from memory.tests.factories import said, save

SLACK_DAY = (
    "**Priya Shah** (09:02): morning! the BigCo pilot kicks off on 12 January\n\n"
    "**Sam Okoro** (09:05): great, who owns the kickoff deck?\n\n"
    "**Priya Shah** (09:06): I do, I'll send it Friday\n\n"
    "**Sam Okoro** (09:10): ok"
)


def test_a_chat_day_is_cut_one_turn_a_passage_with_its_speaker_and_written_time():
    drafts = chunk(SLACK_DAY, "text/markdown")
    assert [(d.speaker, d.said) for d in drafts] == [
        ("Priya Shah", "09:02"), ("Sam Okoro", "09:05"), ("Priya Shah", "09:06"), ("Sam Okoro", "09:10"),
    ]  # fmt: skip
    assert drafts[2].text == "Priya Shah (09:06): I do, I'll send it Friday"


def test_a_list_of_labelled_lines_is_not_a_conversation():
    notes = "Decision: ship in May\n\nOwner: Priya\n\nDue: Friday\n\nRisk: the scanners"
    assert not is_conversation([])
    assert all(d.speaker == "" for d in chunk(notes))


@pytest.mark.django_db
def test_turns_keep_speaker_and_time_and_are_embedded_with_the_turn_before(actor):
    document = save(
        actor,
        "#sales 2026-01-05",
        SLACK_DAY,
        content_type="text/markdown",
        occurred_at=datetime(2026, 1, 5, 9, 2, tzinfo=UTC),
    )
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert [(c.speaker, c.said_at) for c in chunks][2] == ("Priya Shah", datetime(2026, 1, 5, 9, 6, tzinfo=UTC))
    texts = embedded_texts(document, chunk(document.content, document.content_type))
    assert texts[3] == "#sales 2026-01-05\n(after: Priya Shah: I do, I'll send it Friday)\nSam Okoro (January 2026)\nok"


@pytest.mark.django_db
def test_a_one_message_document_is_embedded_after_the_message_before_it_in_its_conversation(actor):
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "Are you flying to Lisbon on Thursday?", at)
    said(actor, "Maya", "Unrelated chatter elsewhere", at, conversation="other")
    answer = said(actor, "Tom", "Yes, the 7am flight", at.replace(minute=5))
    assert embedded_texts(answer, chunk(answer.content))[0].startswith(
        "Tom\n(after: Maya: Are you flying to Lisbon on Thursday?)\nTom (March 2026)"
    )


@pytest.mark.django_db
def test_messages_of_one_session_sharing_a_time_follow_the_order_they_were_saved_in(actor):
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    said(actor, "Caroline", "first", at)
    said(actor, "Melanie", "second", at)
    third = said(actor, "Caroline", "third", at)
    assert "(after: Melanie: second)" in embedded_texts(third, chunk(third.content))[0]


@pytest.mark.django_db
def test_a_message_the_next_ones_readers_cannot_all_see_is_never_its_context(actor, insider):
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "Visible question about the office move?", at)
    said(insider, "Helena", "The Quorvane acquisition closes in June.", at.replace(minute=1), category="board")
    said(actor, "Maya", "Personal aside", at.replace(minute=2), scope="personal")
    reply = said(actor, "Tom", "Yes", at.replace(minute=3))
    text = embedded_texts(reply, chunk(reply.content))[0]
    assert "Quorvane" not in text
    assert "Personal aside" not in text
    assert "(after: Maya: Visible question about the office move?)" in text


@pytest.mark.django_db
def test_re_embedding_computes_each_passage_from_the_same_text_as_ingestion(actor):
    from memory.index.embedding import get_embedder
    from memory.maintenance.reembedding import reembed

    document = save(
        actor,
        "#sales 2026-01-05",
        SLACK_DAY,
        content_type="text/markdown",
        occurred_at=datetime(2026, 1, 5, 9, 2, tzinfo=UTC),
    )
    before = {c.pk: list(c.embedding) for c in Chunk.objects.filter(document=document)}
    Chunk.objects.filter(document=document).update(embedding=[0.0] * 383 + [1.0], embedding_model="old")
    assert reembed(org=actor.org, resume=True)["chunks"] == len(before)
    after = {c.pk: c for c in Chunk.objects.filter(document=document)}
    expected = get_embedder().embed(embedded_texts(document, chunk(document.content, document.content_type)))
    for row, vector in zip(sorted(after.values(), key=lambda c: c.ordinal), expected, strict=True):
        assert row.embedding_model == get_embedder().name
        assert float(sum(a * b for a, b in zip(row.embedding, vector, strict=True))) > 0.999
        assert float(sum(a * b for a, b in zip(row.embedding, before[row.pk], strict=True))) > 0.999


@pytest.mark.django_db
def test_an_edited_message_is_not_embedded_after_its_own_earlier_version(actor):
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "Who books the venue?", at)
    first = said(actor, "Tom", "I booked the venu", at.replace(minute=1), external_id="m2")
    edited = said(actor, "Tom", "I booked the venue", at.replace(minute=1), external_id="m2")
    assert edited.previous_id == first.pk
    assert "(after: Maya: Who books the venue?)" in embedded_texts(edited, chunk(edited.content))[0]


@pytest.mark.django_db
def test_moving_a_message_to_other_readers_embeds_it_and_the_next_one_again_without_it(actor, insider):
    from memory.documents.ingestion import ingest_documents
    from memory.documents.placement import change_document_access
    from memory.index.embedding import get_embedder

    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "Anyone for lunch?", at)
    secret = said(actor, "Helena", "The Quorvane acquisition closes in June.", at.replace(minute=1))
    reply = said(actor, "Tom", "Yes", at.replace(minute=2))
    assert "Quorvane" in embedded_texts(reply, chunk(reply.content))[0]
    admin = Actor(org=actor.org, user=insider.user, scopes=frozenset({"read", "write"}), role="admin")
    board = Category.objects.get(slug="board", org=actor.org)
    change_document_access(actor=admin, document_id=secret.pk, category=board, scope="shared", owner=None)
    assert set(Document.objects.filter(pk__in=[secret.pk, reply.pk]).values_list("status", flat=True)) == {"queued"}
    ingest_documents(document_ids=[secret.pk, reply.pk])
    reply.refresh_from_db()
    text = embedded_texts(reply, chunk(reply.content))[0]
    assert "Quorvane" not in text
    assert "(after: Maya: Anyone for lunch?)" in text
    stored = Chunk.objects.get(document=reply).embedding
    expected = get_embedder().embed([text])[0]
    assert float(sum(a * b for a, b in zip(stored, expected, strict=True))) > 0.999


@pytest.mark.django_db
def test_the_message_after_an_edited_one_is_embedded_again_after_the_new_text(actor):
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "The offsite is in Porto", at, external_id="m1")
    reply = said(actor, "Tom", "Great", at.replace(minute=1))
    said(actor, "Maya", "The offsite is in Lisbon", at, external_id="m1")
    reply.refresh_from_db()
    assert reply.status == "queued"
    assert "Lisbon" in embedded_texts(reply, chunk(reply.content))[0]


@pytest.mark.django_db
def test_deleting_a_message_in_the_admin_embeds_the_next_one_again_without_it(actor):
    from brain.tests.admin_client import logged_in, make_org_admin

    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    said(actor, "Maya", "Anyone for lunch?", at)
    secret = said(actor, "Helena", "The Quorvane acquisition closes in June.", at.replace(minute=1))
    reply = said(actor, "Tom", "Yes", at.replace(minute=2))
    admin = logged_in(make_org_admin(actor.org))
    url = f"/admin/memory/document/{secret.pk}/delete/"
    assert admin.post(url, {"post": "yes"}).status_code == 302
    assert Document.objects.get(pk=secret.pk).trashed_at is not None  # in the trash: read by nobody
    reply.refresh_from_db()
    assert reply.status == "queued"
    text = embedded_texts(reply, chunk(reply.content))[0]
    assert "Quorvane" not in text
    assert "(after: Maya: Anyone for lunch?)" in text
