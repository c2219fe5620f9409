"""Hostile input through every door: REST, the MCP endpoint and the web pages answer with a clear refusal."""

from __future__ import annotations

import json

import httpx
import pytest
from django.conf import settings
from django.test import Client, override_settings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from rest_framework.test import APIClient

from brain.core.services import mark_memory_built
from brain.mcp.invoke import execute
from brain.mcp.registry import PROMPTS, TOOLS, mcp_prompt
from brain.models import ApiToken
from conftest import make_actor, make_token, make_user
from memory.mcp_tools.documents import RetrieveOut
from memory.models import Document, Fact
from tests.conftest import McpCaller, call

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
JSONRPC_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def api(org) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org).plaintext}")
    return client


def refusal(response, status: int = 400) -> str:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"code", "message", "details", "retryable"}
    assert body["message"]
    return body["message"]


# --- REST ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"offset": str(2**64)}, "'offset' must be at most 9,223,372,036,854,775,807"),
        ({"offset": "٣"}, "'offset' must be a whole number in ASCII digits"),
        ({"limit": "²"}, "'limit' must be a whole number in ASCII digits"),
    ],
)
def test_document_paging_numbers_past_64_bits_or_in_other_scripts_are_refused(org, query, expected):
    assert expected in refusal(api(org).get("/api/v1/documents", query))


@pytest.mark.django_db
def test_a_document_id_in_other_digits_is_not_read_as_the_ascii_id(org):
    client = api(org)
    created = client.post("/api/v1/documents", {"title": "t", "content": "c"}, format="json").json()
    pk = created["document_id"].removeprefix("doc_")

    assert client.get(f"/api/v1/documents/doc_{pk}").status_code == 200
    assert "doc_123" in refusal(client.get(f"/api/v1/documents/doc_{pk.translate(ARABIC_INDIC)}"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": "a\x00b", "content": "c"}, "'title' contains a NUL character"),
        ({"title": "t", "content": "c", "metadata": {"k\x00": 1}}, "'metadata.k\\x00' has a key that contains a NUL"),
        ({"title": "t", "content": "c", "source_url": "\ud800"}, "'source_url' contains an unpaired surrogate"),
    ],
)
def test_a_document_with_text_brain_cannot_store_is_refused_naming_the_field(org, body, field):
    sent = json.dumps(body)  # escapes the surrogate, as a client would have to
    assert field in refusal(api(org).generic("POST", "/api/v1/documents", sent, content_type="application/json"))
    assert not Document.objects.filter(org=org).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("moment", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_an_occurred_at_past_the_calendar_in_utc_is_refused_and_the_list_stays_readable(org, moment):
    client = api(org)
    message = refusal(client.post("/api/v1/documents", {"title": "t", "content": "c", "occurred_at": moment}, "json"))
    assert "'occurred_at': the moment is outside the calendar" in message
    edge = client.post("/api/v1/documents", {"title": "t", "content": "c", "occurred_at": "9999-12-31"}, "json")
    assert edge.status_code == 201
    assert client.get("/api/v1/documents").status_code == 200


@pytest.mark.django_db
def test_html_nested_50000_deep_is_saved_as_its_text(org):
    page = "<div>" * 50_000 + "Deep page." + "</div>" * 50_000
    response = api(org).post("/api/v1/documents", {"title": "t", "content": page, "content_type": "text/html"}, "json")
    assert response.status_code == 201
    assert Document.objects.get(org=org).content == "Deep page."


@pytest.mark.django_db
def test_json_nested_deeper_than_python_reads_is_a_json_400(org):
    body = b"[" * 50_000 + b"]" * 50_000
    # The stubs type the body as str; the test client sends bytes as they are.
    response = api(org).generic("POST", "/api/v1/search", body, content_type="application/json")  # type: ignore[arg-type]
    assert "nested too deeply" in refusal(response)


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_body_over_the_size_limit_is_a_413_in_the_json_error_shape(org):
    response = api(org).post("/api/v1/documents", {"title": "t", "content": "x" * 20_000}, format="json")
    assert "larger than Brain's limit of 10,000 bytes" in refusal(response, 413)
    assert response.json()["code"] == "too_large"


@pytest.mark.django_db
def test_too_many_query_parameters_are_a_json_400(org):
    query = "&".join(f"p{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    assert "parameters" in refusal(api(org).get(f"/api/v1/documents?{query}"))


def test_the_size_limit_holds_the_largest_texts_the_tools_and_endpoints_take():
    # Every character escaped as JSON writes it by default: an emoji is 12 bytes (a surrogate pair).
    knowledge = json.dumps({"title": "😀" * 240, "content": "😀" * 200_000, "source_url": "😀" * 1000})
    document = json.dumps({"title": "é" * 240, "content": "é" * 2_000_000})  # \u00e9: 6 bytes each
    assert len(knowledge) < 4 * 1024 * 1024 <= settings.BRAIN_MAX_REQUEST_BYTES
    assert len(document) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.BRAIN_MAX_REQUEST_BYTES


# --- tools: ids whose digits are not ASCII ------------------------------------------------


@pytest.mark.django_db
def test_forget_refuses_a_memory_id_in_other_digits_and_keeps_the_memory(org):
    actor = make_actor(org)
    remembered = execute(actor, TOOLS["remember"], {"content": "The VPN is vpn2.example.com."})
    assert remembered.output is not None
    pk = remembered.output.memory_id.removeprefix("mem_")  # type: ignore[attr-defined]

    for other in (pk.translate(ARABIC_INDIC), "²"):
        outcome = execute(actor, TOOLS["forget"], {"memory_id": f"mem_{other}"})
        assert outcome.code == "invalid_argument"
        assert "is not a memory id" in outcome.message
    assert Fact.objects.filter(pk=pk).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"entities": [{"type": "person", "name": "   "}]}, "'entities.0.name': must not be blank"),
        ({"relations": [{"from": "\t", "to": "VPN", "relation": "owns"}]}, "'relations.0.from': must not be blank"),
        ({"subject": " \u2028 "}, "'subject': must not be blank"),
    ],
)
def test_remember_refuses_names_made_of_spaces(org, arguments, field):
    outcome = execute(make_actor(org), TOOLS["remember"], {"content": "The VPN moved.", **arguments})
    assert outcome.code == "invalid_argument"
    assert field in outcome.message


@pytest.mark.django_db
@pytest.mark.parametrize("top_k", ["1_000", "٣", "²"])
def test_a_limit_written_other_than_in_ascii_digits_is_refused_not_run_past_its_range(org, top_k):
    # "1_000" once slipped past the clamp and asked PostgreSQL for hnsw.ef_search = 4000.
    outcome = execute(make_actor(org), TOOLS["search_company_memory"], {"query": "vpn", "top_k": top_k})
    assert outcome.code == "invalid_argument"
    assert "'top_k': must be a whole number written in ASCII" in outcome.message


@pytest.mark.django_db
def test_retrieve_lists_ids_in_other_digits_as_missing(org):
    actor = make_actor(org)
    saved = api(org).post("/api/v1/documents", {"title": "t", "content": "c"}, format="json").json()
    other = "doc_" + saved["document_id"].removeprefix("doc_").translate(ARABIC_INDIC)

    outcome = execute(actor, TOOLS["retrieve_company_memory"], {"document_ids": [other, "doc_²"]})

    assert isinstance(outcome.output, RetrieveOut)
    assert outcome.output.missing == [other, "doc_²"]


# --- the MCP endpoint ---------------------------------------------------------------------


def mcp_post(url: str, token: str, body: bytes | object, **headers: str) -> httpx.Response:
    all_headers = {**JSONRPC_HEADERS, "Authorization": f"Bearer {token}", **headers}
    return httpx.post(f"{url}/mcp", content=body, headers=all_headers, timeout=60)  # type: ignore[arg-type]


@pytest.mark.django_db(transaction=True)
def test_an_mcp_body_over_the_limit_gets_a_json_rpc_413_declared_or_streamed(brain_url, org):
    token = make_token(org).plaintext
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "x" * 20_000}}).encode()
    with override_settings(BRAIN_MAX_REQUEST_BYTES=10_000):
        declared = mcp_post(brain_url, token, body)
        streamed = mcp_post(brain_url, token, iter([body[:5000], body[5000:]]))
    for response in (declared, streamed):
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == -32600
        assert "larger than Brain's limit of 10,000 bytes" in error["message"]
    assert mcp_post(brain_url, token, body).status_code == 200


UNPAIRED = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health","arguments":{"x":"\\ud800"}}}'


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("body", [b"{nope", b"[" * 50_000 + b"]" * 50_000, b"\xff\xfe", UNPAIRED])
def test_malformed_mcp_json_is_a_json_rpc_parse_error(brain_url, org, body):
    response = mcp_post(brain_url, make_token(org).plaintext, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


@pytest.mark.django_db(transaction=True)
def test_the_largest_add_company_knowledge_passes_the_mcp_limit(brain_url, org):
    mark_memory_built(org=org)
    result = call(
        brain_url, make_token(org).plaintext, "add_company_knowledge", {"title": "t", "content": "😀" * 200_000}
    )
    assert not result.is_error, result.content[0].text


@pytest.mark.django_db(transaction=True)
def test_a_prompt_argument_brain_cannot_store_is_an_invalid_params_error(brain_url, org):
    with McpCaller(brain_url, make_token(org).plaintext) as mcp, pytest.raises(MCPError) as info:
        mcp.run(lambda session: session.get_prompt("recall", {"topic": "VPN\x00"}))
    assert info.value.error.code == INVALID_PARAMS
    assert "'topic' contains a NUL character" in info.value.error.message


@pytest.mark.django_db(transaction=True)
def test_a_prompt_that_fails_unexpectedly_answers_the_generic_message_and_hides_the_cause(brain_url, org):
    @mcp_prompt("test_crashing_prompt", title="Crash")
    def crash(actor, arguments):
        """Always fails."""
        raise RuntimeError("database password is hunter2")

    try:
        with McpCaller(brain_url, make_token(org).plaintext) as mcp, pytest.raises(MCPError) as info:
            mcp.run(lambda session: session.get_prompt("test_crashing_prompt", {}))
    finally:
        PROMPTS.pop("test_crashing_prompt")
    assert info.value.error.code == INTERNAL_ERROR
    assert "hunter2" not in info.value.error.message
    assert info.value.error.message.startswith("Brain hit an unexpected error while running the prompt")


# --- web pages ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"expires": "²"}, "Choose an expiry from the list."),
        ({"expires": "٣"}, "Choose an expiry from the list."),
        ({"expires": "30 days"}, "Choose an expiry from the list."),
        ({"expires": "9" * 30}, "Expiry must be between 1 and 3650 days."),
        ({"name": "laptop\x00"}, "The name contains a NUL character"),
    ],
)
def test_the_connect_form_answers_bad_fields_with_a_form_error(org, form, message):
    user = make_user(org)
    web = Client()
    web.force_login(user)

    response = web.post("/connect/", {"org": org.pk, "access": "read", "expires": "", "name": "n", **form})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not ApiToken.objects.filter(user=user).exists()


@pytest.mark.django_db
def test_a_request_page_for_an_id_with_nul_is_not_found(org):
    web = Client()
    web.force_login(make_user(org))
    assert web.get("/requests/req_%00/").status_code == 404
    assert web.post("/requests/req_%00/save/").status_code == 404


@pytest.mark.django_db
def test_the_answer_page_refuses_an_answer_brain_cannot_store(org):
    from contacts.models import Contact
    from contacts.services import answer_url, dispatch_request

    contact = Contact.objects.create(org=org, name="Farah", topics="budgets", email="f@example.com", channels=["email"])
    request = dispatch_request(actor=make_actor(org), question="Budget?", contact_id=contact.pk)
    path = answer_url(request).removeprefix(settings.BRAIN_BASE_URL)

    response = Client().post(path, {"answer": "500\x00 euros"})

    assert response.status_code == 400
    assert "NUL character" in response.content.decode()
