"""execute, the one door MCP and REST share: text Brain cannot store is refused there, and recorded."""

from __future__ import annotations

from typing import Any

import pytest

from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import ToolCall
from brain.services import record_tool_call, start_activity

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
