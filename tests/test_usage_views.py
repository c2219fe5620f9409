"""Usage as assistants and REST clients see it: get_profile over a real MCP session and
GET /api/v1/usage, the refusal for lack of credits over both, and REST reads charged like tools."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from brain.models import ToolCall
from conftest import make_org, make_token
from memory.documents.saving import add_document
from tests.conftest import call
from usage.metering import month_of
from usage.models import Account, Month

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def spent(org, credits: int = 0) -> None:
    Month.objects.update_or_create(org=org, month=month_of(org), defaults={"free_used": 1000})
    Account.objects.filter(org=org).update(credits=credits)


def test_get_profile_over_mcp_shows_the_plan_the_month_and_the_renewal(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    call(brain_url, token, "search_company_memory", {"query": "anything"})

    usage = call(brain_url, token, "get_profile").structured_content["usage"]

    assert usage["plan"] == "free"
    assert usage["reads"] == 1
    assert usage["free_reads_left"] == 999
    assert usage["credits"] == 1000
    assert usage["renews_at"].startswith(f"{month_of(org).year + (month_of(org).month == 12)}-")
    assert usage["out_of_credits"] is False


def test_the_rest_usage_view_answers_even_at_zero_credits_and_is_not_charged(db):
    org = make_org()
    spent(org)
    body = client_for(make_token(org, scopes="read").plaintext).get("/api/v1/usage").json()
    assert body["out_of_credits"] is True
    assert body["free_reads_left"] == 0
    assert ToolCall.objects.get(org=org, tool="usage").credits == 0


def test_a_read_over_mcp_at_zero_credits_is_an_error_result_that_says_what_to_do(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    spent(org)
    result = call(brain_url, token, "search_company_memory", {"query": "anything"})
    assert result.is_error
    assert "credits" in result.content[0].text
    assert "Tell the user" in result.content[0].text


def test_rest_reads_of_documents_are_charged_and_refused_like_tools(db):
    org = make_org()
    issued = make_token(org)
    client = client_for(issued.plaintext)
    saved = add_document(actor=_actor(issued), title="Rota", content="Ana covers Mondays.")
    spent(org, credits=1)

    first = client.get(f"/api/v1/documents/{saved.document.public_id}")
    second = client.get("/api/v1/documents")

    assert first.status_code == 200
    assert second.status_code == 402
    assert second.json()["code"] == "out_of_credits"
    assert list(ToolCall.objects.filter(org=org).order_by("pk").values_list("credits", flat=True)) == [1, 0]


def test_saving_a_document_over_rest_at_zero_credits_is_accepted_and_waits(db):
    org = make_org()
    spent(org)
    response = client_for(make_token(org).plaintext).post(
        "/api/v1/documents", {"title": "Parking", "content": "Level -2."}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["status"] == "waiting"


def _actor(issued):
    from brain.core.services import actor_for_token

    return actor_for_token(issued.token, via="api")
