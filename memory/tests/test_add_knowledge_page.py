"""The Add knowledge page: what it saves, what it refuses and why, and whose status it shows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from brain.models import Category
from conftest import make_actor, make_org, make_user
from memory.documents.saving import add_document
from memory.models import Document, Upload
from memory.upload.reading import read_upload
from usage.models import Account

pytestmark = pytest.mark.django_db

URL = "/knowledge/add/"


def member_client(org, **extra) -> tuple[Client, User]:
    user = make_user(org, **extra)
    client = Client()
    client.force_login(user)
    return client, user


def upload(client: Client, *files: SimpleUploadedFile, **fields: str):
    return client.post(URL, {"kind": "files", "files": list(files), **fields})


def said(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def status(client: Client, document: Document):
    return client.get(f"/knowledge/documents/{document.pk}/status/")


def read_all() -> None:
    """What the worker does with each file kept by the page (memory.tasks.read_upload_task)."""
    for upload in Upload.objects.filter(status="queued").order_by("pk"):
        read_upload(upload_id=upload.pk)


def upload_status(client: Client, name: str) -> dict:
    upload = Upload.objects.get(name=name)
    return client.get(f"/knowledge/uploads/{upload.pk}/status/").json()


def test_a_member_uploads_files_into_a_category_and_sees_them_queued(org):
    handbook = Category.objects.create(org=org, slug="handbook", name="Handbook")
    client, user = member_client(org)
    response = upload(
        client,
        SimpleUploadedFile("holidays.md", b"# Holidays\n\nWe get 25 days a year."),
        SimpleUploadedFile("vpn.txt", b"The VPN is at vpn.example.com."),
        category="handbook",
        scope="personal",
    )
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert "2 files saved; each is read into documents in the background." in page.content.decode()
    assert page.content.decode().count('data-status="queued"') == 2
    assert not Document.objects.filter(org=org).exists()  # read by the worker, not while the member waits
    read_all()
    documents = Document.objects.filter(org=org).order_by("title")
    assert [(d.title, d.category, d.scope, d.owner, d.source_kind, d.status) for d in documents] == [
        ("Holidays", handbook, "personal", user, "upload", "queued"),
        ("vpn", handbook, "personal", user, "upload", "queued"),
    ]
    assert upload_status(client, "vpn.txt")["detail"] == "Saved; waiting for the worker to take it."


def test_a_file_brain_cannot_read_is_refused_with_the_reason_and_the_others_are_kept(org):
    client, _ = member_client(org)
    response = upload(
        client,
        SimpleUploadedFile("broken.pdf", b"%PDF-1.4 this is not really a pdf"),
        SimpleUploadedFile("tool.exe", b"MZ\x00\x01"),
        SimpleUploadedFile("empty.txt", b"   \n"),
        SimpleUploadedFile("notes.txt", b"Standup is at 9:30."),
    )
    messages = said(response)
    assert any(m.startswith("tool.exe was not added: Brain does not read .exe files; it reads .md") for m in messages)
    assert "empty.txt was not added: there is no text in it." in messages
    read_all()
    broken = upload_status(client, "broken.pdf")
    assert (broken["status"], broken["final"], broken["can_retry"]) == ("failed", True, True)
    assert broken["detail"].startswith("Not added: not a readable PDF")
    assert list(Document.objects.filter(org=org).values_list("title", flat=True)) == ["notes"]


def test_a_file_over_the_size_limit_is_refused_saying_the_limit(org, settings):
    settings.BRAIN_UPLOAD_MAX_FILE_MB = 1
    client, _ = member_client(org)
    big = SimpleUploadedFile("big.txt", b"word " * 300_000)  # 1.5 MB
    response = upload(client, big, SimpleUploadedFile("small.txt", b"Small and fine."))
    assert "big.txt was not added: it is larger than 1 MB, the most one file may be." in said(response)
    read_all()
    assert list(Document.objects.filter(org=org).values_list("title", flat=True)) == ["small"]


def test_more_files_than_the_limit_are_refused_and_nothing_is_saved(org, settings):
    settings.BRAIN_UPLOAD_MAX_FILES = 2
    client, _ = member_client(org)
    files = [SimpleUploadedFile(f"note{i}.txt", b"A note.") for i in range(3)]
    response = upload(client, *files)
    assert response.status_code == 400
    assert "Choose at most 2 files at a time (you chose 3)" in response.content.decode()
    assert not Upload.objects.exists()


def test_more_files_than_django_parses_get_the_same_clear_refusal(org, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    client, _ = member_client(org)
    response = upload(client, *[SimpleUploadedFile(f"note{i}.txt", b"A note.") for i in range(3)])
    assert response.status_code == 413
    assert "Choose at most 20 files at a time, each at most 10 MB; nothing was saved." in response.content.decode()
    assert not Upload.objects.exists()


def test_a_category_the_member_cannot_read_is_refused_and_not_offered(org):
    Category.objects.create(org=org, slug="board", name="Board", restricted=True)
    client, _ = member_client(org)
    response = client.post(URL, {"kind": "text", "title": "Minutes", "content": "We met.", "category": "board"})
    assert response.status_code == 400
    assert "Unknown category &#x27;board&#x27;" in response.content.decode()
    assert not Document.objects.filter(org=org).exists()
    assert 'value="board"' not in client.get(URL).content.decode()


def test_pasted_text_is_saved_and_text_brain_cannot_store_is_refused_naming_the_field(org):
    client, user = member_client(org)
    client.post(URL, {"kind": "text", "title": "Parking", "content": "Level -2 is ours.", "scope": "shared"})
    document = Document.objects.get(org=org)
    assert (document.title, document.content, document.scope, document.owner) == (
        "Parking", "Level -2 is ours.", "shared", user,
    )  # fmt: skip
    refused = client.post(URL, {"kind": "text", "title": "Bad", "content": "nul \x00 here"})
    assert refused.status_code == 400
    assert "The text: contains a NUL character" in refused.content.decode()
    assert Document.objects.filter(org=org).count() == 1


def test_a_personal_document_is_invisible_to_another_members_status_endpoint(org):
    owner_client, owner = member_client(org)
    other_client, _ = member_client(org)
    mine = add_document(actor=make_actor(org, owner, via="web"), title="My notes", content="x", scope="personal")
    assert status(owner_client, mine.document).json()["title"] == "My notes"
    assert status(other_client, mine.document).status_code == 404
    theirs = add_document(actor=make_actor(make_org()), title="Elsewhere", content="y").document
    assert status(owner_client, theirs).status_code == 404


def test_a_waiting_document_says_whether_ingestion_is_paused_or_usage_ran_out(org):
    client, user = member_client(org)
    org.ingestion_paused_at = timezone.now()
    org.save(update_fields=["ingestion_paused_at"])
    paused = add_document(actor=make_actor(org, user), title="Paused", content="x").document
    body = status(client, paused).json()
    assert (body["status"], body["final"]) == ("waiting", False)
    assert "Ingestion is paused" in body["detail"]
    org.ingestion_paused_at = None
    org.save(update_fields=["ingestion_paused_at"])
    Account.objects.filter(org=org).update(credits=0)
    from usage.metering import month_of
    from usage.models import Month

    Month.objects.create(org=org, month=month_of(org), free_used=1000)
    broke = add_document(actor=make_actor(org, user), title="Broke", content="y").document
    assert status(client, broke).json()["status"] == "waiting"
    assert "usage has run out" in status(client, broke).json()["detail"]


def test_a_failed_document_shows_its_reason_and_retry_queues_it_again(org):
    client, user = member_client(org)
    document = add_document(actor=make_actor(org, user), title="Report", content="x").document
    Document.objects.filter(pk=document.pk).update(status="failed", error="EmbeddingError: model file missing")
    body = status(client, document).json()
    assert (body["status"], body["final"], body["can_retry"]) == ("failed", True, True)
    assert body["detail"] == "EmbeddingError: model file missing"
    again = client.post(body["retry_url"], HTTP_ACCEPT="application/json")
    assert again.json()["status"] == "queued"
    assert Document.objects.get(pk=document.pk).status == "queued"


def test_a_member_cannot_retry_a_colleagues_personal_document(org):
    client, _ = member_client(org)
    colleague = make_user(org)
    theirs = add_document(actor=make_actor(org, colleague), title="Theirs", content="x", scope="personal").document
    Document.objects.filter(pk=theirs.pk).update(status="failed", error="boom")
    response = client.post(f"/knowledge/documents/{theirs.pk}/retry/", HTTP_ACCEPT="application/json")
    assert response.status_code == 404
    assert "Theirs" not in response.content.decode()
    assert Document.objects.get(pk=theirs.pk).status == "failed"


def test_every_post_needs_the_csrf_token(org):
    user = make_user(org)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    document = add_document(actor=make_actor(org, user), title="Report", content="x").document
    Document.objects.filter(pk=document.pk).update(status="failed")
    assert client.post(URL, {"kind": "text", "title": "T", "content": "C"}).status_code == 403
    files = {"kind": "files", "files": [SimpleUploadedFile("a.txt", b"A")]}
    assert client.post(URL, files).status_code == 403
    assert client.post(f"/knowledge/documents/{document.pk}/retry/").status_code == 403
    assert not Document.objects.filter(org=org, title__in=["T", "a"]).exists()
    assert not Upload.objects.exists()
    assert Document.objects.get(pk=document.pk).status == "failed"


def test_the_same_file_again_is_unchanged_and_a_colleagues_file_of_that_name_is_its_own(org):
    client, _ = member_client(org)
    colleague_client, _ = member_client(org)
    upload(client, SimpleUploadedFile("notes.txt", b"Mine."))
    read_all()
    first = Document.objects.get(org=org)
    upload(client, SimpleUploadedFile("notes.txt", b"Mine."))
    read_all()
    assert list(Upload.objects.values_list("document_ids", flat=True)) == [[first.pk], [first.pk]]
    upload(colleague_client, SimpleUploadedFile("notes.txt", b"Theirs."))
    read_all()
    documents = Document.objects.filter(org=org)
    assert sorted(documents.values_list("content", flat=True)) == ["Mine.", "Theirs."]
    assert not documents.filter(superseded_at__isnull=False).exists()


def test_the_page_needs_a_login_and_offers_the_menu_entry(org):
    assert Client().get(URL).status_code == 302
    client, _ = member_client(org)
    page = client.get(URL).content.decode()
    assert '<a href="/knowledge/add/" aria-current="page">Add knowledge</a>' in page  # the menu, this page marked
    assert "Up to 20 files at a time, each at most 10 MB." in page
