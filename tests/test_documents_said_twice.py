"""Said twice, seen through the interfaces: saving the same note twice without an external id keeps
one document (MCP, REST), and a promise said in two places is one commitment naming both (MCP, page)."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.test import APIClient

from brain.core.services import mark_memory_built
from brain.models import Category
from conftest import make_actor, make_org, make_token, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.models import Document
from registers.nightly import run_nightly
from registers.tests.test_said_twice import promised_twice  # noqa: F401 (a fixture)
from tests.conftest import call


@pytest.fixture
def insider(actor):
    """A member of the restricted 'board' category; ``actor`` is not."""
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    member = make_actor(actor.org, make_user(actor.org))
    group = Group.objects.create(name=f"board-{actor.org.pk}")
    board.groups.add(group)
    member.user.groups.add(group)
    return member


NOTE = "Weekly sync 2025-11-24\n\nMarta will send the revised quote to Northwind by Friday."


@pytest.mark.django_db
def test_the_same_title_and_content_saved_again_returns_the_first_document(actor):
    first = add_document(actor=actor, title="Weekly sync", content=NOTE)
    ingest_document(document_id=first.document.pk)
    again = add_document(actor=actor, title="Weekly sync", content=NOTE)
    assert (again.created, again.duplicate, again.duplicate_of) == (False, True, first.document.public_id)
    assert Document.objects.filter(org=actor.org).count() == 1


@pytest.mark.django_db
def test_another_title_another_moment_or_another_speaker_is_another_document(actor):
    add_document(actor=actor, title="Weekly sync", content=NOTE)
    assert add_document(actor=actor, title="Weekly sync (copy)", content=NOTE).created
    said = datetime(2025, 11, 24, 9, tzinfo=UTC)
    assert add_document(actor=actor, title="chat", content="Thanks!", speaker="Marta", occurred_at=said).created
    assert add_document(actor=actor, title="chat", content="Thanks!", speaker="Diego", occurred_at=said).created
    later = datetime(2025, 11, 25, 9, tzinfo=UTC)
    assert add_document(actor=actor, title="chat", content="Thanks!", speaker="Marta", occurred_at=later).created
    assert not add_document(actor=actor, title="chat", content="Thanks!", speaker="Marta", occurred_at=said).created


@pytest.mark.django_db
def test_a_twin_the_writer_cannot_read_is_never_found(actor, insider):
    """Someone else's personal note and a note in a category the writer cannot read stay hidden: the
    writer's own save makes its own document, and nothing in the answer points at theirs."""
    theirs = add_document(actor=insider, title="Weekly sync", content=NOTE, scope="personal")
    board = add_document(actor=insider, title="Weekly sync", content=NOTE, category="board")
    mine = add_document(actor=actor, title="Weekly sync", content=NOTE, scope="personal")
    assert mine.created
    assert mine.duplicate_of is None
    assert mine.document.pk not in (theirs.document.pk, board.document.pk)
    shared = add_document(actor=actor, title="Weekly sync", content=NOTE)
    assert shared.created
    assert shared.document.category.slug == "general"
    # The same note saved where another reader sees it differently is its own document too.
    assert add_document(actor=insider, title="Weekly sync", content=NOTE, category="board").duplicate_of == (
        board.document.public_id
    )


@pytest.mark.django_db
def test_a_remembered_memory_is_never_a_twin(actor):
    add_document(actor=actor, title="Weekly sync", content=NOTE, source_kind="remember")
    assert add_document(actor=actor, title="Weekly sync", content=NOTE).created


@pytest.mark.django_db(transaction=True)
def test_add_company_knowledge_says_the_note_was_already_saved(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    token = make_token(org).plaintext
    arguments = {"title": "Weekly sync", "content": NOTE}
    first = call(brain_url, token, "add_company_knowledge", arguments)
    assert not first.is_error, first.content[0].text
    assert first.structured_content["unchanged"] is False
    again = call(brain_url, token, "add_company_knowledge", arguments)
    assert not again.is_error, again.content[0].text
    document = Document.objects.get(org=org)
    assert again.structured_content["unchanged"] is True
    assert again.structured_content["duplicate_of"] == document.public_id
    assert "in memory already" in again.content[0].text
    # Another member's save of the same note is the same shared document; their own personal one is not.
    other = make_token(org, make_user(org)).plaintext
    assert call(brain_url, other, "add_company_knowledge", arguments).structured_content["unchanged"] is True
    assert Document.objects.filter(org=org).count() == 1


@pytest.mark.django_db
def test_the_rest_api_answers_200_with_the_document_it_repeats():
    org = make_org()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org).plaintext}")
    body = {"title": "Weekly sync", "content": NOTE}
    first = client.post("/api/v1/documents", body, format="json")
    assert first.status_code == 201, first.content
    assert (first.json()["unchanged"], first.json()["duplicate_of"]) == (False, None)
    again = client.post("/api/v1/documents", body, format="json")
    assert again.status_code == 200, again.content
    assert again.json()["unchanged"] is True
    assert again.json()["duplicate_of"] == first.json()["document_id"] == again.json()["document_id"]
    # Someone who cannot read it is not told of it: their personal save is a new document.
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org, make_user(org)).plaintext}")
    personal = stranger.post("/api/v1/documents", {**body, "scope": "personal"}, format="json")
    assert personal.status_code == 201
    assert personal.json()["duplicate_of"] is None
    assert Document.objects.filter(org=org).count() == 2


@pytest.mark.django_db(transaction=True)
def test_list_commitments_and_the_register_page_name_each_place_the_promise_was_said(promised_twice, brain_url):  # noqa: F811
    actor, first, second = promised_twice
    mark_memory_built(org=actor.org)
    run_nightly(actor.org)
    result = call(brain_url, make_token(actor.org, actor.user).plaintext, "list_commitments", {})
    assert not result.is_error, result.content[0].text
    [shown] = result.structured_content["commitments"]
    assert [s["document_id"] for s in shown["said_also"]] == [second.public_id]
    assert f"also said in: {second.title} ({second.public_id}, 2026-03-03, due 2026-03-06)" in result.content[0].text
    browser = Client()
    browser.force_login(actor.user)
    page = browser.get("/registers/").content.decode()
    assert "also said in <a href=" in page
    assert f">{second.title}</a> (2026-03-03)" in page  # linked to the passage that says it, never by id
    assert second.public_id not in page
