"""execute, the one door MCP and REST share: tools the caller may not see, text Brain cannot store and
outages of the models Brain needs are answered there, and recorded."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from brain.core.services import record_tool_call, start_activity
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, ToolOutput, mcp_tool
from brain.models import Features, ToolCall
from conftest import everything_on, make_actor
from memory.graph.llm import LLMError
from memory.index.embedding import EmbeddingError, get_embedder

pytestmark = pytest.mark.django_db


def text_arguments() -> list[tuple[str, str, bool]]:
    """(tool, argument, is a list of texts) for every argument of every tool that takes text."""
    found = []
    for name, spec in sorted(TOOLS.items()):
        for field, schema in spec.input_schema().get("properties", {}).items():
            kinds = [schema, *schema.get("anyOf", [])]
            if any(kind.get("type") == "string" and "enum" not in kind for kind in kinds):
                found.append((name, field, False))
            elif any(kind.get("type") == "array" and kind.get("items", {}).get("type") == "string" for kind in kinds):
                found.append((name, field, True))
    return found


def required_arguments(name: str) -> dict[str, Any]:
    schema = TOOLS[name].input_schema()
    values: dict[str, Any] = {}
    for field in schema.get("required", []):
        spec = schema["properties"][field]
        values[field] = spec["enum"][0] if "enum" in spec else "hello"
    return values


def test_the_tools_take_text_in_many_arguments():
    assert len({tool for tool, _, _ in text_arguments()}) >= 14


@pytest.mark.parametrize(("tool", "field", "is_list"), text_arguments())
@pytest.mark.parametrize("bad", ["a\x00b", "\ud800"])
def test_text_brain_cannot_store_is_refused_in_every_argument_of_every_tool(actor, tool, field, is_list, bad):
    Features.objects.filter(org=actor.org).update(**everything_on())
    actor.org.refresh_from_db()  # every tool is switched on: the refusal is about the text, not the switch
    arguments = {**required_arguments(tool), field: [bad] if is_list else bad}

    outcome = execute(actor, TOOLS[tool], arguments)

    assert (outcome.code, outcome.status) == ("invalid_argument", 400), outcome.message
    assert f"'{field}" in outcome.message
    assert "NUL" in outcome.message or "surrogate" in outcome.message
    assert ToolCall.objects.get(org=actor.org).outcome == ToolCall.REFUSED


def test_a_nul_in_the_activity_id_still_leaves_a_call_record(actor):
    outcome = execute(actor, TOOLS["search_company_memory"], {"query": "budget", "activity_id": "act_\x00"})

    assert outcome.code == "invalid_argument"
    assert "'activity_id' contains a NUL" in outcome.message
    call = ToolCall.objects.get(org=actor.org)
    assert call.tool == "search_company_memory"
    assert call.outcome == ToolCall.REFUSED
    assert call.activity is None


@pytest.mark.parametrize("activity_id", ["act_\x00", "\ud800", "x" * 500, "act_" + "0" * 20])
def test_a_call_record_never_fails_on_an_activity_id_that_cannot_be_one(actor, activity_id):
    call = record_tool_call(actor=actor, tool="init", duration_ms=1.0, outcome=ToolCall.OK, activity_id=activity_id)
    assert call.pk
    assert call.activity is None


def test_a_real_activity_is_still_linked(actor):
    activity = start_activity(actor=actor, label="q")
    call = record_tool_call(actor=actor, tool="init", duration_ms=1.0, outcome="ok", activity_id=activity.public_id)
    assert call.activity == activity


def test_json_nested_too_deep_is_refused_before_the_tool_runs(actor):
    deep: dict[str, Any] = {}
    for _ in range(50_000):
        deep = {"x": deep}

    outcome = execute(actor, TOOLS["add_company_knowledge"], {"title": "t", "content": "c", "metadata": deep})

    assert outcome.code == "invalid_argument"
    assert "nested more than 32 levels deep" in outcome.message


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoOut(ToolOutput):
    pass


@pytest.fixture
def gated_tools():
    """A tool behind a feature nobody has switched on, and one whose language model is down."""

    @mcp_tool("test_gated", title="Gated", args=NoArgs, output=NoOut, feature="test_never_on")
    def gated(actor, args):
        """Runs only with the feature on."""
        return NoOut()

    @mcp_tool("test_llm_down", title="LLM down", args=NoArgs, output=NoOut)
    def llm_down(actor, args):
        """Always meets an unreachable language model."""
        raise LLMError("LLM request failed: connection refused")

    yield
    TOOLS.pop("test_gated")
    TOOLS.pop("test_llm_down")


@pytest.fixture
def embedder_down(monkeypatch):
    def down(texts):
        raise EmbeddingError("embedding endpoint http://127.0.0.1:9/v1 failed: connection refused", transient=True)

    monkeypatch.setattr(get_embedder(), "embed", down)


def test_a_write_tool_is_refused_to_a_read_only_actor_by_execute_and_recorded_as_denied(org):
    reader = make_actor(org, scopes="read")

    outcome = execute(reader, TOOLS["remember"], {"content": "The office moved to Leeds."})

    assert (outcome.output, outcome.code, outcome.status) == (None, "permission_denied", 403)
    assert "read-only" in outcome.message
    assert outcome.details == {"scope": "write"}
    assert ToolCall.objects.get(org=org).outcome == ToolCall.DENIED


def test_a_tool_behind_a_feature_that_is_off_is_refused_by_execute(actor, gated_tools):
    outcome = execute(actor, TOOLS["test_gated"], {})

    assert (outcome.code, outcome.status) == ("permission_denied", 403)
    assert "switched off" in outcome.message
    assert outcome.details == {"feature": "test_never_on"}


def test_a_refusal_carries_its_details_in_the_outcome(actor):
    outcome = execute(actor, TOOLS["skills_publish"], {"slug": "not a slug!", "name": "n", "content": "c"})

    assert outcome.code == "invalid_argument"
    assert outcome.details == {"field": "slug"}


def test_an_unreachable_embedder_answers_unavailable_and_retryable_not_an_unexpected_error(actor, embedder_down):
    outcome = execute(actor, TOOLS["search_company_memory"], {"query": "budget"})

    assert (outcome.output, outcome.code, outcome.status, outcome.retryable) == (None, "unavailable", 503, True)
    assert "embedding model" in outcome.message
    assert "try again" in outcome.message.lower()
    assert "127.0.0.1" not in outcome.message  # the endpoint stays in the log
    call = ToolCall.objects.get(org=actor.org)
    assert (call.outcome, call.error_code) == (ToolCall.ERROR, "unavailable")


def test_an_unreachable_language_model_answers_unavailable_too(actor, gated_tools):
    outcome = execute(actor, TOOLS["test_llm_down"], {})

    assert (outcome.code, outcome.status, outcome.retryable) == ("unavailable", 503, True)
    assert "language model" in outcome.message
