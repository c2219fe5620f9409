"""The REST API: same tokens, services and limits as MCP, documented by its OpenAPI schema."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from brain.core.services import revoke_token
from brain.models import Report, ToolCall
from conftest import make_actor, make_org, make_token
from memory.index.embedding import EmbeddingError, get_embedder

pytestmark = pytest.mark.django_db


def client_for(token: str | None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_profile_answers_with_the_same_opaque_id_as_mcp(org):
    issued = make_token(org)
    body = client_for(issued.plaintext).get("/api/v1/profile").json()
    assert body["email"] == issued.token.user.email
    assert body["profile_id"].startswith("prf_")
    assert ToolCall.objects.get(org=org).via == "api"


@pytest.mark.parametrize("header", [None, "Bearer brn_nope_nope", "Token abc", "Bearer "])
def test_missing_or_bad_tokens_get_401_with_a_clear_message(org, header):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/profile")
    assert response.status_code == 401
    assert response.json()["message"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_revoked_token_is_refused(org):
    issued = make_token(org)
    revoke_token(actor=make_actor(org, issued.token.user), token_id=issued.token.pk)
    assert client_for(issued.plaintext).get("/api/v1/health").status_code == 401


def test_reports_are_cut_and_invalid_ones_refused_with_the_field_named(org):
    client = client_for(make_token(org).plaintext)
    ok = client.post(
        "/api/v1/reports/issues", {"category": "wrong_answer", "observed": "o" * 3000, "expected": "e"}, format="json"
    )
    assert ok.status_code == 200
    assert len(Report.objects.get(org=org).observed) == 2000
    bad = client.post("/api/v1/reports/feedback", {"summary": "x", "origin": "robot"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_argument"
    assert "'origin'" in bad.json()["message"]


def test_activities_belong_to_the_callers_organisation(org):
    body = client_for(make_token(org).plaintext).post("/api/v1/activities", {"label": "q"}, format="json").json()
    other = client_for(make_token(make_org()).plaintext)
    other.post(
        "/api/v1/reports/issues",
        {"category": "tool_error", "observed": "x", "expected": "y", "activity_id": body["activity_id"]},
        format="json",
    )
    assert Report.objects.get().activity is None


def test_the_openapi_schema_lists_every_endpoint():
    schema = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    for path in ["/api/v1/profile", "/api/v1/health", "/api/v1/init", "/api/v1/activities", "/api/v1/reports/issues"]:
        assert path in schema["paths"], path
    issue = schema["paths"]["/api/v1/reports/issues"]["post"]
    assert issue["requestBody"]
    assert "200" in issue["responses"]


def test_the_docs_page_loads_its_assets_from_brain_not_a_cdn():
    html = APIClient().get("/api/v1/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, assets
    assert all(not a.startswith(("http://", "https://", "//")) for a in assets), assets


def test_a_write_tool_answers_a_read_token_with_the_same_refusal_as_mcp_and_its_details(org):
    response = client_for(make_token(org, scopes="read").plaintext).post(
        "/api/v1/memories", {"content": "The office moved to Leeds."}, format="json"
    )
    body = response.json()
    assert response.status_code == 403
    assert body["code"] == "permission_denied"
    assert "read-only" in body["message"]
    assert body["details"] == {"scope": "write"}
    assert ToolCall.objects.get(org=org).outcome == ToolCall.DENIED


def test_an_unreachable_embedder_answers_503_unavailable_with_a_retry_after(org, monkeypatch):
    def down(texts):
        raise EmbeddingError("embedding endpoint timed out", transient=True)

    monkeypatch.setattr(get_embedder(), "embed", down)
    response = client_for(make_token(org).plaintext).post("/api/v1/search", {"query": "budget"}, format="json")
    body = response.json()
    assert response.status_code == 503
    assert body["code"] == "unavailable"
    assert "embedding model" in body["message"]
    assert set(body) == {"code", "message", "details", "retryable"}
    assert response["Retry-After"].isdigit()
