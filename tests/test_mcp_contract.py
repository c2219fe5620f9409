"""The MCP endpoint as a client sees it: the official SDK client against the running ASGI app."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import jsonschema
import pytest
from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, ConfigDict

from brain.core.services import mark_memory_built, revoke_token, start_activity
from brain.mcp.registry import TOOLS, ToolOutput, mcp_tool
from brain.models import ApiToken, Report, ToolCall
from conftest import make_actor, make_org, make_token
from memory.index.embedding import EmbeddingError, get_embedder
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)

CORE_TOOLS = {"init", "health", "get_profile", "start_company_memory_activity", "report_issue", "send_feedback"}
JSONRPC_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""


class EchoOut(ToolOutput):
    text: str


@pytest.fixture
def test_tools():
    """A write tool and a crashing tool, registered for one test and removed after it."""

    @mcp_tool("test_write_echo", title="Echo (write)", args=EchoArgs, output=EchoOut, scope="write")
    def write_echo(actor, args):
        """Echo the text back; needs the write scope."""
        return EchoOut(text=args.text)

    @mcp_tool("test_crash", title="Crash", args=EchoArgs, output=EchoOut)
    def crash(actor, args):
        """Always fails with an internal error."""
        raise RuntimeError("database password is hunter2")

    yield
    TOOLS.pop("test_write_echo")
    TOOLS.pop("test_crash")


@pytest.fixture
def org():
    org = make_org()
    mark_memory_built(org=org)
    return org


def tool_names(url, token):
    result = run_mcp(url, token, lambda s: s.list_tools())
    return {tool.name: tool for tool in result.tools}


def test_a_read_token_never_sees_or_runs_write_tools(brain_url, org, test_tools):
    read, write = make_token(org, scopes="read"), make_token(org, scopes="read,write")
    assert set(tool_names(brain_url, read.plaintext)) >= CORE_TOOLS
    assert "test_write_echo" not in tool_names(brain_url, read.plaintext)
    assert "test_write_echo" in tool_names(brain_url, write.plaintext)
    refused = call(brain_url, read.plaintext, "test_write_echo", {"text": "hi"})
    assert refused.is_error
    assert "read-only" in refused.content[0].text
    assert call(brain_url, write.plaintext, "test_write_echo", {"text": "hi"}).structured_content == {"text": "hi"}


def test_every_tool_has_a_title_annotations_a_description_and_schemas(brain_url, org):
    tools = tool_names(brain_url, make_token(org).plaintext)
    assert set(tools) >= CORE_TOOLS
    assert len(tools) > len(CORE_TOOLS)  # every app's tools, not the core's alone
    for tool in tools.values():
        assert tool.title
        assert tool.annotations.title == tool.title
        assert tool.annotations.read_only_hint is not None
        assert tool.annotations.destructive_hint is not None
        assert len(tool.description) > 80
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema["type"] == "object"
    assert tools["init"].annotations.read_only_hint is True
    assert tools["report_issue"].annotations.read_only_hint is False
    assert tools["start_company_memory_activity"].annotations.read_only_hint is True


def test_every_core_tool_answers_with_structured_content_matching_its_schema(brain_url, org):
    token = make_token(org).plaintext
    arguments = {
        "init": {},
        "health": {},
        "get_profile": {},
        "start_company_memory_activity": {"label": "a question"},
        "report_issue": {"category": "tool_error", "observed": "it failed", "expected": "it works"},
        "send_feedback": {"summary": "more detail", "origin": "agent"},
    }

    async def walk(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        results = {}
        for name, args in arguments.items():
            results[name] = (await session.call_tool(name, args), tools[name].output_schema)
        return results

    for name, (result, schema) in run_mcp(brain_url, token, walk).items():
        assert not result.is_error, (name, result.content)
        jsonschema.validate(result.structured_content, schema)
        assert result.content[0].text.strip()
    assert ToolCall.objects.filter(org=org, outcome="ok").count() == len(arguments)


def test_init_shows_the_collecting_notice_until_the_memory_is_built(brain_url):
    fresh = make_org()
    token = make_token(fresh).plaintext
    collecting = call(brain_url, token, "init")
    assert collecting.structured_content["ready"] is False
    assert "not ready" in collecting.structured_content["notice"]
    assert collecting.structured_content["rules"] == []
    assert collecting.structured_content["total_count"] == 0
    mark_memory_built(org=fresh)
    ready = call(brain_url, token, "init").structured_content
    assert ready["ready"] is True
    assert ready["rules"]
    assert ready["total_count"] == len(ready["skills"])


def test_get_profile_gives_an_opaque_stable_id_and_the_email(brain_url, org):
    issued = make_token(org)
    first = call(brain_url, issued.plaintext, "get_profile").structured_content
    second = call(brain_url, make_token(org, user=issued.token.user).plaintext, "get_profile").structured_content
    assert first["profile_id"] == second["profile_id"]
    assert first["email"] == issued.token.user.email
    assert str(issued.token.user.pk) != first["profile_id"].removeprefix("prf_")


def test_long_report_texts_are_cut_to_their_limits_not_refused(brain_url, org):
    token = make_token(org).plaintext
    result = call(
        brain_url,
        token,
        "report_issue",
        {
            "category": "missing_information",
            "observed": "o" * 2500,
            "expected": "e" * 2001,
            "user_request": "u" * 900,
            "error_message": "m" * 5000,
        },
    )
    assert not result.is_error
    report = Report.objects.get(org=org)
    assert (len(report.observed), len(report.expected), len(report.user_request), len(report.error_message)) == (
        2000,
        2000,
        500,
        2000,
    )
    call(brain_url, token, "send_feedback", {"summary": "s" * 2001, "origin": "user", "context": "c" * 1001})
    feedback = Report.objects.get(org=org, kind="feedback")
    assert (len(feedback.summary), len(feedback.context)) == (2000, 1000)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("report_issue", {"category": "bad", "observed": "x", "expected": "y"}, "'category' must be one of"),
        ("report_issue", {"category": "tool_error", "observed": "x"}, "'expected' is required"),
        ("report_issue", {"category": "tool_error", "observed": "", "expected": "y"}, "'observed' must not be empty"),
        ("send_feedback", {"summary": "x", "origin": "robot"}, "'origin' must be one of"),
        ("send_feedback", {"summary": "x", "origin": "user", "mood": "sad"}, "'mood' is not an argument"),
        ("get_profile", {"unexpected": 1}, "'unexpected' is not an argument"),
        ("no_such_tool", {}, "There is no tool named"),
    ],
)
def test_invalid_arguments_come_back_as_tool_errors_a_model_can_act_on(brain_url, org, tool, arguments, expected):
    result = call(brain_url, make_token(org).plaintext, tool, arguments)
    assert result.is_error
    assert expected in result.content[0].text


def test_unexpected_failures_are_logged_and_answered_generically(brain_url, org, test_tools):
    result = call(brain_url, make_token(org).plaintext, "test_crash", {})
    assert result.is_error
    assert "unexpected error" in result.content[0].text
    assert "hunter2" not in result.content[0].text
    assert ToolCall.objects.get(org=org, tool="test_crash").outcome == "error"


def test_calls_are_recorded_with_their_activity_and_outcome(brain_url, org):
    issued = make_token(org)
    activity = start_activity(actor=make_actor(org, issued.token.user))
    call(
        brain_url,
        issued.plaintext,
        "send_feedback",
        {"summary": "x", "origin": "user", "activity_id": activity.public_id},
    )
    call(brain_url, issued.plaintext, "send_feedback", {"summary": "x", "origin": "nobody"})
    calls = list(ToolCall.objects.filter(org=org).order_by("started_at"))
    assert [(c.tool, c.outcome, c.via) for c in calls] == [
        ("send_feedback", "ok", "mcp"),
        ("send_feedback", "refused", "mcp"),
    ]
    assert calls[0].activity == activity
    assert calls[0].token_id == issued.token.pk
    assert calls[0].duration_ms > 0


def test_another_organisations_activity_is_not_linked(brain_url, org):
    stranger = start_activity(actor=make_actor(make_org()))
    call(
        brain_url,
        make_token(org).plaintext,
        "report_issue",
        {"category": "tool_error", "observed": "x", "expected": "y", "activity_id": stranger.public_id},
    )
    assert Report.objects.get(org=org).activity is None


def post(url, body, token=None, **headers):
    all_headers = dict(JSONRPC_HEADERS, **headers)
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    return httpx.post(f"{url}/mcp", content=body, headers=all_headers, timeout=30)


LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'


@pytest.mark.parametrize("kind", ["missing", "unknown", "revoked", "expired"])
def test_bad_tokens_get_401_pointing_at_the_resource_metadata(brain_url, org, kind):
    issued = make_token(org)
    if kind == "revoked":
        revoke_token(actor=make_actor(org, issued.token.user), token_id=issued.token.pk)
    if kind == "expired":
        ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    token = {"missing": None, "unknown": "brn_00000000_nope"}.get(kind, issued.plaintext)
    response = post(brain_url, LIST, token)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{settings.BRAIN_BASE_URL}/.well-known/oauth-protected-resource/mcp"' in challenge


def test_oauth_discovery_is_consistent_and_a_bearer_token_still_works(brain_url, org):
    # The resource names this server as its authorisation server, and that server's metadata is there.
    resource = httpx.get(f"{brain_url}/.well-known/oauth-protected-resource/mcp").json()
    assert resource == httpx.get(f"{brain_url}/.well-known/oauth-protected-resource").json()
    assert resource["resource"] == f"{settings.BRAIN_BASE_URL}/mcp"
    server = httpx.get(f"{brain_url}/.well-known/oauth-authorization-server").json()
    assert resource["authorization_servers"] == [server["issuer"]]
    assert httpx.get(f"{brain_url}/.well-known/openid-configuration").status_code == 404  # no OpenID Connect
    profile = call(brain_url, make_token(org).plaintext, "get_profile", {})
    assert not profile.is_error
    assert profile.structured_content["organisation"] == org.name


def test_a_foreign_origin_gets_403_and_a_foreign_host_421(brain_url, org):
    token = make_token(org).plaintext
    assert post(brain_url, LIST, token, Origin="http://evil.example").status_code == 403
    assert post(brain_url, LIST, token, Host="evil.example").status_code == 421
    assert post(brain_url, LIST, token, Origin="http://localhost:3000").status_code == 200


def test_get_is_405_and_protocol_errors_stay_jsonrpc_errors(brain_url, org):
    token = make_token(org).plaintext
    assert httpx.get(f"{brain_url}/mcp", headers={"Authorization": f"Bearer {token}"}).status_code == 405
    malformed = post(brain_url, "{not json", token)
    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == -32700
    unknown = post(brain_url, '{"jsonrpc":"2.0","id":2,"method":"no/such"}', token)
    assert unknown.json()["error"]["code"] == -32601


def test_tokens_of_one_organisation_see_nothing_of_another(brain_url, org):
    other = make_org()
    mark_memory_built(org=other)
    mine = call(brain_url, make_token(org).plaintext, "init").structured_content
    theirs = call(brain_url, make_token(other).plaintext, "init").structured_content
    assert mine["organisation"] == org.name
    assert theirs["organisation"] == other.name


def error_of(result):
    """The error as JSON, after the message the model reads."""
    return json.loads(result.content[1].text)["error"]


def test_an_mcp_error_carries_its_code_and_details_after_the_message(brain_url, org):
    token = make_token(org).plaintext
    refused = call(brain_url, token, "skills_publish", {"slug": "not a slug!", "name": "n", "content": "c"})
    assert refused.is_error
    assert "not valid" in refused.content[0].text
    assert error_of(refused) == {"code": "invalid_argument", "details": {"field": "slug"}, "retryable": False}
    read_only = call(brain_url, make_token(org, scopes="read").plaintext, "remember", {"content": "x"})
    assert error_of(read_only) == {"code": "permission_denied", "details": {"scope": "write"}, "retryable": False}


def test_an_unreachable_embedder_is_a_retryable_unavailable_error_over_mcp(brain_url, org, monkeypatch):
    def down(texts):
        raise EmbeddingError("embedding endpoint timed out", transient=True)

    monkeypatch.setattr(get_embedder(), "embed", down)
    result = call(brain_url, make_token(org).plaintext, "search_company_memory", {"query": "budget"})
    assert result.is_error
    assert "embedding model" in result.content[0].text
    assert error_of(result) == {"code": "unavailable", "details": {}, "retryable": True}
