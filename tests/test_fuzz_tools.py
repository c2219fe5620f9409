"""Property-based fuzzing of every registered tool, over the real MCP client and over REST.

Arguments are drawn from each tool's own input schema (``tests/fuzzing.py``), so every tool,
including the next one registered, is fuzzed. The properties: no call ends in Brain's generic
failure or a 5xx, every refusal is a readable message, every answer matches the tool's output
schema, and no call record says "unexpected error".

The run is bounded and reproducible: at most ``BRAIN_FUZZ_EXAMPLES`` examples (default 50) per
tool and transport, fewer for tools with few arguments, derandomized, and no example database is
written. By hand, ``BRAIN_FUZZ_EXAMPLES=500`` searches longer and ``BRAIN_FUZZ_RANDOM=1`` searches
somewhere new each run (a failure prints the arguments that reproduce it).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema
import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, TextContent

from brain.core.services import mark_memory_built, start_activity
from brain.mcp.invoke import GENERIC_FAILURE
from brain.mcp.registry import PROMPTS, TOOLS, ToolSpec
from brain.models import Features, ToolCall
from conftest import make_actor, make_org, make_token
from contacts.models import Contact
from contacts.services import save_contact_topics
from memory.api import DocumentIn, DocumentList, DocumentOut
from memory.graph.memories import remember
from memory.models import Entity
from memory.tests.factories import save
from tests.conftest import McpCaller
from tests.fuzzing import SchemaStrategies

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("BRAIN_FUZZ_EXAMPLES", "50"))
GENERIC = GENERIC_FAILURE.split("{tool}")[0]
SURROGATE = re.compile("[\ud800-\udfff]")


def budget(spec: ToolSpec) -> int:
    """More examples for tools with more arguments; a tool without any has little to vary."""
    return max(4, EXAMPLES * min(len(spec.input_schema().get("properties", {})), 5) // 5)


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=not os.environ.get("BRAIN_FUZZ_RANDOM"),
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@dataclass
class World:
    org: Any
    token: str
    ids: list[str]


@pytest.fixture
def world() -> World:
    """An organisation with something behind every kind of id, every feature on, a read-write token."""
    org = make_org()
    mark_memory_built(org=org)
    Features.objects.filter(org=org).update(commitments=True, contradictions=True, glossary=True, jobs=True)
    actor = make_actor(org)
    document = save(actor, "VPN handbook", "# VPN\n\nPriya Shah runs the VPN at vpn.example.com since 2024-01-10.")
    owns = {"from": "Priya Shah", "to": "VPN", "relation": "owns"}
    fact = remember(actor=actor, content="Priya Shah owns the VPN.", subject="Priya Shah", relations=[owns])
    contact = Contact.objects.create(
        org=org, name="Ivo Security", topics="VPN", email="ivo@example.com", channels=["email"]
    )
    save_contact_topics(contact)
    ids = [document.public_id, fact.public_id, contact.public_id, start_activity(actor=actor).public_id]
    ids += [f"chunk_{pk}" for pk in document.chunks.values_list("pk", flat=True)]
    ids += [f"ent_{pk}" for pk in Entity.objects.filter(org=org).values_list("pk", flat=True)] + ["Priya Shah", "VPN"]
    token = make_token(org, actor.user).plaintext
    return World(org=org, token=token, ids=ids)


def assert_readable(message: str) -> None:
    assert message.strip(), "an empty refusal"
    assert not message.startswith(GENERIC), message
    assert "Traceback" not in message, message[:500]
    assert len(message) < 20_000, message[:500]


def assert_refused(error: MCPError) -> None:
    # Code 0 is what the SDK answers when a handler raised; INTERNAL_ERROR is Brain's generic failure.
    assert error.error.code in (INVALID_PARAMS, INVALID_REQUEST), (error.error.code, error.error.message)
    assert_readable(error.error.message)


def assert_no_unexpected_errors(world: World) -> None:
    errors = ToolCall.objects.filter(org=world.org, outcome=ToolCall.ERROR)

    assert not errors.exists(), [(c.tool, c.via, c.error_code) for c in errors]


def sendable(value: Any) -> Any:
    """What a JSON encoder that writes UTF-8 can send: unpaired surrogates become U+FFFD."""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sendable(v) for v in value]
    return value


# --- MCP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_no_tool_fails_unexpectedly_on_hostile_arguments_over_mcp(brain_url, world, tool):
    spec = TOOLS[tool]
    output = spec.output_schema()

    with McpCaller(brain_url, world.token) as mcp:

        @fuzz(budget(spec))
        @given(arguments=SchemaStrategies(spec.input_schema(), world.ids).arguments())
        def check(arguments: dict[str, Any]) -> None:
            try:
                result = mcp.call(tool, sendable(arguments))
            except MCPError as exc:  # a JSON-RPC error answer is a refusal too, if it says so
                assert_refused(exc)
                return
            if result.is_error:
                assert_readable(result.content[0].text)
            else:
                jsonschema.validate(result.structured_content, output)

        check()
    assert_no_unexpected_errors(world)


@pytest.mark.parametrize("prompt", sorted(PROMPTS))
def test_no_prompt_fails_unexpectedly_on_hostile_arguments(brain_url, world, prompt):
    spec = PROMPTS[prompt]
    schema = {
        "properties": {name: {"type": "string"} for name, _, _ in spec.arguments},
        "required": [name for name, _, required in spec.arguments if required],
    }

    with McpCaller(brain_url, world.token) as mcp:

        @fuzz(max(4, EXAMPLES // 2))
        @given(arguments=SchemaStrategies(schema, world.ids).arguments())
        def check(arguments: dict[str, Any]) -> None:
            texts = {str(k): v for k, v in sendable(arguments).items() if isinstance(v, str)}  # prompts take text
            try:
                result = mcp.run(lambda session: session.get_prompt(prompt, texts))
            except MCPError as exc:
                assert_refused(exc)
                return
            assert result.messages
            assert isinstance(result.messages[0].content, TextContent)
            assert result.messages[0].content.text.strip()

        check()


# --- REST ---------------------------------------------------------------------------------


def rest_routes() -> dict[str, tuple[str, str]]:
    """Every tool's REST route, from Django's URL configuration: tool -> (method, path pattern)."""
    routes: dict[str, tuple[str, str]] = {}

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and hasattr(view := _view_class(pattern), "tool"):
                routes[view.tool] = (view.tool_method, prefix + str(pattern.pattern))

    walk(get_resolver().url_patterns, "/")
    return routes


def _view_class(pattern: URLPattern) -> Any:
    """The class-based view behind a route (None for a function view)."""
    return getattr(pattern.callback, "view_class", None)


ROUTES = rest_routes()


def query_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value) if isinstance(value, dict | list) else str(value)
    return sendable(text)[:2000]  # a URL has room for that much; long texts go in POST bodies


def path_value(value: Any) -> str:
    # Only the value is fuzzed, not routing: a slash or a dot segment would name another URL.
    text = query_value(value).replace("/", "_")
    return quote(text if text.strip(".") else f"x{text}", safe="")


def send(http: httpx.Client, method: str, route: str, arguments: dict[str, Any]) -> httpx.Response:
    rest = dict(arguments)
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: path_value(rest.pop(m.group(1), "x")), route)
    if method == "get":
        params = {query_value(k): query_value(v) for k, v in rest.items() if v is not None}
        return http.get(path, params=params)
    if method == "delete":
        return http.delete(path)
    return http.post(path, content=json.dumps(arguments), headers={"Content-Type": "application/json"})


def assert_answered(response: httpx.Response, output: dict[str, Any]) -> None:
    """No 5xx; a refusal in the one error shape with a readable message; an answer in the output schema."""
    assert response.status_code < 500, (response.status_code, response.text[:500])
    assert response.headers["content-type"] == "application/json", response.text[:500]
    body = response.json()
    if response.status_code >= 400:
        assert set(body) == {"code", "message", "details", "retryable"}, body
        assert body["code"] != "internal", body
        assert_readable(body["message"])
    else:
        jsonschema.validate(body, output)


def test_the_rest_api_reaches_most_tools():
    assert len(ROUTES) >= 15
    assert {"search_company_memory", "remember", "forget"} <= set(ROUTES)


@pytest.mark.parametrize("tool", sorted(ROUTES))
def test_no_tool_fails_unexpectedly_on_hostile_arguments_over_rest(brain_url, world, tool):
    spec, (method, route) = TOOLS[tool], ROUTES[tool]
    output = spec.output_schema()

    with httpx.Client(base_url=brain_url, headers={"Authorization": f"Bearer {world.token}"}, timeout=120) as http:

        @fuzz(budget(spec))
        @given(arguments=SchemaStrategies(spec.input_schema(), world.ids).arguments())
        def check(arguments: dict[str, Any]) -> None:
            assert_answered(send(http, method, route, arguments), output)

        check()
    assert_no_unexpected_errors(world)


# --- the documents endpoints (REST only, no MCP twin) -------------------------------------

LISTING = {
    "type": "object",
    "properties": {
        "status": {"enum": ["queued", "waiting", "processing", "ready", "failed"]},
        "limit": {"type": "integer"},
        "offset": {"type": "integer"},
    },
}


def test_the_documents_endpoints_never_fail_unexpectedly_on_hostile_input(brain_url, world):
    saved, listed = DocumentOut.model_json_schema(), DocumentList.model_json_schema()
    bodies = SchemaStrategies(DocumentIn.model_json_schema(), world.ids).arguments()
    queries = SchemaStrategies(LISTING, world.ids).arguments()
    fetches = SchemaStrategies(
        {"properties": {"document_id": {"type": "string"}}, "required": ["document_id"]}, world.ids
    )

    with httpx.Client(base_url=brain_url, headers={"Authorization": f"Bearer {world.token}"}, timeout=120) as http:

        @fuzz(EXAMPLES)
        @given(body=bodies, query=queries, fetch=fetches.arguments())
        def check(body: dict[str, Any], query: dict[str, Any], fetch: dict[str, Any]) -> None:
            for response, schema in (
                (send(http, "post", "/api/v1/documents", body), saved),
                (send(http, "get", "/api/v1/documents", query), listed),
                (send(http, "get", "/api/v1/documents/<document_id>", fetch), saved),
            ):
                assert_answered(response, schema)

        check()
