"""Hostile uploads: the page answers before any file is read, the worker reads under a budget and
refuses what passes it with a reason the member sees, one document limit holds on every way in,
and one organisation's queue does not hold another's short documents."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from pypdf import PageObject
from rest_framework.test import APIClient

from bench.hostile_files import mbox, shared_stream_pdf
from brain.core.errors import InvalidArgument
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from conftest import make_actor, make_org, make_token, make_user
from memory.api import DocumentIn
from memory.documents.ingestion import ingest_document, ingest_next
from memory.documents.lanes import BULK_QUEUE, SHORT_QUEUE, next_document
from memory.documents.saving import add_document
from memory.extraction import files as parsers
from memory.extraction.parsed import ParseError
from memory.limits import BULK_CHARS, MAX_DOCUMENT_CHARS, MAX_DOCUMENTS_PER_FILE
from memory.mcp_tools.documents import AddKnowledgeArgs
from memory.models import Document, Upload
from memory.upload.reading import next_upload, read_next, read_upload

pytestmark = pytest.mark.django_db

URL = "/knowledge/add/"


def member(org) -> tuple[Client, User]:
    user = make_user(org)
    client = Client()
    client.force_login(user)
    return client, user


def send(client: Client, name: str, data: bytes):
    return client.post(URL, {"kind": "files", "files": [SimpleUploadedFile(name, data)]})


def read_all() -> None:
    for upload in Upload.objects.filter(status="queued").order_by("pk"):
        read_upload(upload_id=upload.pk)


def shown(client: Client, name: str) -> dict:
    upload = Upload.objects.get(name=name)
    return client.get(f"/knowledge/uploads/{upload.pk}/status/").json()


# --- reading happens in the worker ---------------------------------------------------------------


def test_the_upload_answers_before_any_file_is_read(org, monkeypatch):
    read_in_the_request: list[str] = []

    def watched(source):
        read_in_the_request.append(source.rel)
        return []

    monkeypatch.setattr(parsers, "_PARSERS", dict.fromkeys(parsers._PARSERS, watched))
    client, user = member(org)
    hostile = shared_stream_pdf(pages=20, stream_bytes=5_000_000)
    response = send(client, "report.pdf", hostile)
    assert response.status_code == 302
    assert read_in_the_request == []
    upload = Upload.objects.get(org=org)
    assert (upload.owner, upload.status, bytes(upload.data)) == (user, "queued", hostile)
    assert shown(client, "report.pdf")["detail"] == "Saved; waiting for the worker to read it."


def test_a_file_that_needs_more_processor_time_than_the_budget_is_refused_saying_so(org, settings):
    settings.BRAIN_UPLOAD_READ_SECONDS = 3
    client, _ = member(org)
    send(client, "report.pdf", shared_stream_pdf(pages=6, stream_bytes=5_000_000))  # 30 MB drawn: minutes of pypdf
    read_all()
    status = shown(client, "report.pdf")
    assert (status["status"], status["final"]) == ("failed", True)
    assert status["detail"] == (
        "Not added: reading it took more than 3 seconds of processor time, the most one file may take; split the file."
    )
    assert not Document.objects.filter(org=org).exists()


def test_a_pdf_of_more_pages_than_the_limit_is_refused_before_its_text_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(parsers, "MAX_PDF_PAGES", 2)
    path = tmp_path / "long.pdf"
    path.write_bytes(shared_stream_pdf(pages=3, stream_bytes=1000))
    with pytest.raises(ParseError, match=r"^it has 3 pages; a PDF may have at most 2\.$"):
        parsers.parse_file(path)


def test_a_pdf_whose_pages_repeat_one_huge_stream_is_refused_before_its_text_is_read(tmp_path, monkeypatch):
    extracted: list[int] = []

    def extract_text(page: PageObject, *args: object, **kwargs: object) -> str:
        extracted.append(1)
        return ""

    monkeypatch.setattr(PageObject, "extract_text", extract_text)
    path = tmp_path / "shared.pdf"
    path.write_bytes(shared_stream_pdf(pages=20, stream_bytes=5_000_000))  # 17 KB, 100 MB drawn
    with pytest.raises(ParseError, match="its pages hold more than 32 MB of drawing instructions"):
        parsers.parse_file(path)
    assert extracted == []


def test_a_pdf_whose_pages_share_one_stream_stops_at_the_character_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(parsers, "MAX_DOCUMENT_CHARS", 1000)
    path = tmp_path / "shared.pdf"
    path.write_bytes(shared_stream_pdf(pages=50, stream_bytes=5000))
    with pytest.raises(ParseError, match="its text passes 1,000 characters, the most one document may hold"):
        parsers.parse_file(path)


def test_a_mailbox_of_more_messages_than_one_file_may_make_is_refused_naming_the_limit(org):
    client, _ = member(org)
    send(client, "everything.mbox", mbox(messages=MAX_DOCUMENTS_PER_FILE + 1))
    read_all()
    status = shown(client, "everything.mbox")
    assert status["status"] == "failed"
    assert status["detail"] == (
        f"Not added: it holds {MAX_DOCUMENTS_PER_FILE + 1:,} documents; one file may make at most "
        f"{MAX_DOCUMENTS_PER_FILE:,}. Split it into several files."
    )
    assert not Document.objects.filter(org=org).exists()


def test_a_mailbox_within_the_limit_is_read_into_one_document_a_message(org):
    client, user = member(org)
    send(client, "team.mbox", mbox(messages=3))
    read_all()
    documents = Document.objects.filter(org=org)
    assert sorted(documents.values_list("title", flat=True)) == ["Note 0", "Note 1", "Note 2"]
    assert {(d.owner, d.status) for d in documents} == {(user, "queued")}
    status = shown(client, "team.mbox")
    assert (status["status"], status["detail"]) == (
        "processing", "Read into 3 documents: 0 searchable, 3 still being indexed."
    )  # fmt: skip


def test_another_members_upload_is_not_found(org):
    client, _ = member(org)
    other, _ = member(org)
    send(client, "mine.txt", b"Mine.")
    upload = Upload.objects.get()
    assert other.get(f"/knowledge/uploads/{upload.pk}/status/").status_code == 404
    assert other.post(f"/knowledge/uploads/{upload.pk}/retry/", HTTP_ACCEPT="application/json").status_code == 404


# --- one document limit on every way in ----------------------------------------------------------


def test_one_limit_on_a_documents_length_holds_on_every_way_in(org):
    actor = make_actor(org)
    too_long = "x" * (MAX_DOCUMENT_CHARS + 1)
    words = f"is {MAX_DOCUMENT_CHARS + 1:,} characters long; one document may hold at most {MAX_DOCUMENT_CHARS:,}"
    with pytest.raises(InvalidArgument, match=words):
        add_document(actor=actor, title="Book", content=too_long)
    # The interfaces' own field limits are the same number, so they refuse before the service.
    assert DocumentIn.model_fields["content"].metadata[-1].max_length == MAX_DOCUMENT_CHARS
    assert AddKnowledgeArgs.model_fields["content"].metadata[-1].max_length == MAX_DOCUMENT_CHARS
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org).plaintext}")
    refused = api.post("/api/v1/documents", {"title": "Book", "content": too_long}, format="json")
    assert refused.status_code == 400
    assert "2000000" in refused.json()["message"]
    said = execute(actor, TOOLS["add_company_knowledge"], {"title": "Book", "content": too_long})
    assert said.code == "invalid_argument"
    assert "2000000" in said.message
    client, _ = member(org)
    send(client, "book.txt", too_long.encode())
    read_all()
    assert shown(client, "book.txt")["detail"] == f"Not added: its text {words}. Split it into several documents."
    assert not Document.objects.filter(org=org).exists()


# --- lanes, and organisations taking turns -------------------------------------------------------


@pytest.fixture
def sent(monkeypatch) -> list[tuple[int, str]]:
    """The ingest messages sent, with their queue, instead of the broker."""
    messages: list[tuple[int, str]] = []

    def send_task(name, args=None, queue=None, **kwargs):
        if name == "memory.tasks.ingest_document_task":
            messages.append((args[0], queue))

    monkeypatch.setattr(current_app, "send_task", send_task)
    return messages


def test_long_documents_are_queued_in_their_own_lane_and_a_short_one_passes_them(
    sent, django_capture_on_commit_callbacks
):  # noqa: E501
    first, second = make_org(), make_org()
    book = "w " * BULK_CHARS
    with django_capture_on_commit_callbacks(execute=True):
        longs = [add_document(actor=make_actor(first), title=f"Book {n}", content=book).document for n in range(3)]
        note = add_document(actor=make_actor(second), title="Note", content="Standup moved to 9:30.").document
    assert sent == [*((d.pk, BULK_QUEUE) for d in longs), (note.pk, SHORT_QUEUE)]
    assert next_document(lane=SHORT_QUEUE) == note.pk
    assert next_document(lane=BULK_QUEUE) == longs[0].pk


def test_organisations_take_turns_in_a_lane_whatever_their_queues_hold():
    busy, quiet = make_org(), make_org()
    bulk = [add_document(actor=make_actor(busy), title=f"Mail {n}", content=f"Mail {n}.").document for n in range(30)]
    note = add_document(actor=make_actor(quiet), title="Note", content="The VPN moved.").document
    # Neither was served yet: the one waiting longest goes first.
    assert next_document(lane=SHORT_QUEUE) == bulk[0].pk
    Document.objects.filter(pk=bulk[0].pk).update(status="processing", claimed_at=timezone.now())
    assert next_document(lane=SHORT_QUEUE) == note.pk  # busy has one in flight, quiet none
    Document.objects.filter(pk__in=[bulk[0].pk, note.pk]).update(status="ready", claimed_at=timezone.now())
    Document.objects.filter(pk=note.pk).update(claimed_at=timezone.now() - timedelta(hours=1))
    later = add_document(actor=make_actor(quiet), title="Later", content="Lunch is at one.").document
    assert next_document(lane=SHORT_QUEUE) == later.pk  # quiet was served less recently than busy


def test_a_message_of_one_organisations_backlog_ingests_another_organisations_note(sent):
    busy, quiet = make_org(), make_org()
    bulk = [add_document(actor=make_actor(busy), title=f"Mail {n}", content=f"Message {n}.").document for n in range(5)]
    note = add_document(actor=make_actor(quiet), title="Note", content="The VPN moved to vpn2.").document
    Document.objects.filter(pk=bulk[0].pk).update(status="processing", claimed_at=timezone.now())
    assert ingest_next(document_id=bulk[1].pk) == "ready"
    assert Document.objects.get(pk=note.pk).status == "ready"
    assert Document.objects.get(pk=bulk[1].pk).status == "queued"  # its own message comes later


def test_a_message_whose_document_another_message_took_ingests_the_lanes_next_one(sent):
    # Otherwise the document whose turn was taken is left without a message until the sweep.
    busy, quiet = make_org(), make_org()
    mail = add_document(actor=make_actor(busy), title="Mail", content="The invoice is paid.").document
    note = add_document(actor=make_actor(quiet), title="Note", content="The VPN moved to vpn2.").document
    assert ingest_document(document_id=note.pk) == "ready"  # taken by the message sent for the mail
    assert ingest_next(document_id=note.pk) == "ready"  # the note's own message
    assert Document.objects.get(pk=mail.pk).status == "ready"
    assert ingest_next(document_id=mail.pk) == "skipped"  # the lane is empty: nothing more to do


def test_a_message_whose_document_a_dead_worker_held_takes_that_one_back(sent):
    org = make_org()
    held = add_document(actor=make_actor(org), title="Held", content="Held by a dead worker.").document
    other = add_document(actor=make_actor(org), title="Other", content="Queued meanwhile.").document
    Document.objects.filter(pk=held.pk).update(
        status="processing", claim="gone:1:x", claimed_at=timezone.now() - timedelta(days=1)
    )
    assert ingest_next(document_id=held.pk) == "ready"
    assert Document.objects.get(pk=held.pk).status == "ready"
    assert Document.objects.get(pk=other.pk).status == "queued"


def test_files_take_turns_between_organisations_in_their_lane(org, sent):
    busy, _ = member(org)
    for n in range(3):
        send(busy, f"report-{n}.pdf", shared_stream_pdf(pages=20, stream_bytes=5_000_000))
    quiet_org = make_org()
    quiet, _ = member(quiet_org)
    send(quiet, "minutes.pdf", b"%PDF-1.4 not really a pdf")
    first, *_ = Upload.objects.filter(org=org).order_by("pk")
    theirs = Upload.objects.get(org=quiet_org)
    assert next_upload(lane=BULK_QUEUE) == first.pk  # nobody served yet: the one waiting longest
    Upload.objects.filter(pk=first.pk).update(status="processing", claimed_at=timezone.now())
    assert next_upload(lane=BULK_QUEUE) == theirs.pk
    assert next_upload(lane=SHORT_QUEUE) is None  # PDFs are read in the bulk lane
    # A message of the busy organisation's second file reads the quiet one's instead.
    second = Upload.objects.filter(org=org, status="queued").order_by("pk")[0]
    assert read_next(upload_id=second.pk) == "failed"
    theirs.refresh_from_db()
    assert theirs.status == "failed"
    assert theirs.error.startswith("not a readable PDF")
    assert Upload.objects.get(pk=second.pk).status == "queued"
