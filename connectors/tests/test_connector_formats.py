"""What connectors bring in is read by the same block readers as an upload: an issue's or pull
request's body is markdown (its tables are rows, its lists items), an error's frames are code."""

from __future__ import annotations

import pytest

from brain.models import Category
from connectors import sync
from connectors.tests.sentry_server import sentry_server
from memory.documents.ingestion import ingest_documents
from memory.documents.source import blocks_of
from memory.extraction import Kind
from memory.models import Chunk, Document, Fact

pytestmark = pytest.mark.django_db

BODY = """The export times out for large workspaces.

| Workspace | Rows | Time |
|-----------|------|------|
| Acme | 120000 | 95 s |

Steps to reproduce:

- open the export page
- pick the whole workspace
"""


def connect(actor, kind, options, token):
    category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
    return sync.add_connection(
        actor=actor, kind=kind, name=kind, category=category, credentials={"token": token}, options=options
    )


def ingested(connection) -> Document:
    document = Document.objects.get(org=connection.org, source_kind="connector")
    ingest_documents(document_ids=[document.pk])
    document.refresh_from_db()
    return document


def test_an_issue_body_is_read_as_markdown(github, admin_actor):
    github.add_issue("acme/api", 7, updated="2026-11-02T10:00:00Z", body=BODY)
    connection = connect(admin_actor, "github", {"repositories": "acme/api"}, "ghp_valid")
    assert sync.sync_connection(connection.pk).saved == 1
    document = ingested(connection)
    assert document.content_type == "text/markdown"
    kinds = [block.kind for block in blocks_of(document) or []]
    assert Kind.ROW in kinds
    assert kinds.count(Kind.ITEM) == 2
    passages = list(Chunk.objects.filter(document=document).values_list("text", flat=True))
    assert any(p.startswith("Acme: Rows: 120000; Time: 95 s.") for p in passages), passages
    assert not [p for p in passages if "|" in p]


def test_an_errors_frames_are_code_and_give_no_facts(admin_actor, settings):
    with sentry_server() as fake:
        settings.BRAIN_SENTRY_API_URL = f"{fake.base}/api/0/"
        fake.add_issue(
            "web",
            1,
            first_seen="2026-10-01T09:00:00Z",
            last_seen="2026-11-02T10:00:00Z",
            frames=(("src/checkout/total.py", "compute_total"),),
            release="shop@1.4.0",
        )
        connection = connect(admin_actor, "sentry", {"organisation": "acme", "projects": "web"}, "sntrys_valid")
        assert sync.sync_connection(connection.pk).saved == 1
    document = ingested(connection)
    assert document.content_type == "text/markdown"
    code = [block.text for block in blocks_of(document) or [] if block.kind == Kind.CODE]
    assert code
    assert "at src/checkout/total.py in compute_total line 10" in code[0]
    said = " ".join(Fact.objects.filter(document=document).values_list("statement", flat=True))
    assert "compute_total" not in said
