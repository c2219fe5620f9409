import pytest
from rest_framework.test import APIClient

from conftest import make_org, make_token
from memory.documents.ingestion import ingest_documents
from memory.models import Document

pytestmark = pytest.mark.django_db


def client_for(token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_create_list_get_and_search_documents(org):
    client = client_for(make_token(org).plaintext)
    created = client.post(
        "/api/v1/documents",
        {
            "title": "Release notes",
            "content": "<h1>v2</h1><p>Dark mode ships in v2.</p><script>x()</script>",
            "content_type": "text/html",
            "external_id": "rel-2",
        },
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["status"] == "queued"
    document_id = created.json()["document_id"]
    same = {"title": "Release notes", "content": Document.objects.get().content, "content_type": "text/markdown",
            "external_id": "rel-2"}  # fmt: skip
    again = client.post("/api/v1/documents", same, format="json")
    assert again.status_code == 200
    assert again.json()["created"] is False
    ingest_documents(document_ids=[int(document_id.removeprefix("doc_"))])
    listed = client.get("/api/v1/documents?status=ready").json()
    assert listed["count"] == 1
    assert listed["results"][0]["document_id"] == document_id
    detail = client.get(f"/api/v1/documents/{document_id}").json()
    assert detail["content"].startswith("# v2")
    assert "x()" not in detail["content"]
    assert detail["chunk_count"] == 1
    hits = client.post("/api/v1/search", {"query": "dark mode"}, format="json").json()
    assert hits["hits"][0]["document_id"] == document_id
    pages = client.post("/api/v1/retrieve", {"document_ids": [document_id]}, format="json").json()
    assert pages["pages"][0]["title"] == "Release notes"


def test_documents_of_another_organisation_are_not_found(org):
    theirs = client_for(make_token(make_org()).plaintext)
    document_id = theirs.post("/api/v1/documents", {"title": "t", "content": "c"}, format="json").json()["document_id"]
    mine = client_for(make_token(org).plaintext)
    assert mine.get(f"/api/v1/documents/{document_id}").status_code == 404
    assert mine.get("/api/v1/documents").json()["count"] == 0


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"title": "t"}, 400, "'content' is required"),
        ({"title": "t", "content": "c", "scope": "everyone"}, 400, "'scope' must be one of"),
        ({"title": "t", "content": "c", "category": "nope"}, 400, "Unknown category"),
    ],
)
def test_bad_documents_are_refused_clearly(org, body, status, needle):
    response = client_for(make_token(org).plaintext).post("/api/v1/documents", body, format="json")
    assert response.status_code == status
    assert needle in response.json()["message"]


def test_read_only_tokens_cannot_create_and_bad_filters_are_explained(org):
    client = client_for(make_token(org, scopes="read").plaintext)
    assert client.post("/api/v1/documents", {"title": "t", "content": "c"}, format="json").status_code == 403
    assert client.get("/api/v1/documents?status=lost").status_code == 400
    assert client.get("/api/v1/documents/doc_x").status_code == 400


def test_refused_document_calls_are_recorded_too(org):
    from brain.models import ToolCall

    client = client_for(make_token(org).plaintext)
    assert client.get("/api/v1/documents/doc_999999").status_code == 404  # raised by the selector
    assert client.post("/api/v1/documents", {"title": "t"}, format="json").status_code == 400
    outcomes = list(ToolCall.objects.filter(org=org).order_by("pk").values_list("tool", "outcome", "error_code"))
    assert outcomes == [("documents.get", ToolCall.REFUSED, "404"), ("documents.create", ToolCall.REFUSED, "400")]
