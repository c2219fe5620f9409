"""Every registered tool, run through execute on a small organisation, answers what its output schema says.

The arguments are built from each tool's input schema (the required fields, with a value of their
type), so a new tool is covered the day it is registered; a tool that needs a real id or some
setup gets it in ``NEEDS``. A tool missing from the walk fails the test."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, ToolOutput
from connectors.tests.github_server import github_server
from connectors.tests.slack_server import slack_server
from tests.small_org import small_organisation

pytestmark = pytest.mark.django_db


def needs(known: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Arguments a tool needs beyond a value of the right type: real ids, valid slugs, a question the data answers."""
    return {
        "retrieve_company_memory": {"document_ids": [known["document_id"]]},
        "explore_entity": {"entity": known["entity"]},
        "find_entity": {"name": known["entity"]},
        "forget": {"memory_id": known["memory_id"]},
        "skills_get": {"slug": "deploy-guide"},
        "skills_publish": {"slug": "travel-guide", "name": "Travel guide", "content": "Book early."},
        "ask_company_memory": {"question": "When do deploys run?"},
        "search_company_memory": {"query": "deploy branch"},
        "request_human_info": {"question": "Who approves a rollback of a deploy?"},
        "why_code": {"repo": "acme/shop"},
        "update_commitment": {"id": known["commitment_id"], "status": "open"},
        "answer_contradiction": {"id": known["contradiction_id"], "answer": "both", "note": "Both hold."},
        "update_term": {"id": known["term_id"], "state": "open"},
        "schedule_once": {"at": "2031-01-09T09:00"},
        "schedule_job": {"schedule": "0 9 * * 1-5"},
        "update_job": {"id": known["job_id"], "enabled": False},
        "github_get_issue": {"repository": "acme/shop", "number": 1},
        "github_comment": {"repository": "acme/shop", "number": 1, "body": "Deploys moved to Tuesdays."},
        "github_search_issues": {"query": "deploy"},
        "github_search_pull_requests": {"query": "deploy"},
        "slack_post_message": {"channel": "#general", "text": "Deploys moved to Tuesdays."},
        "slack_read_channel": {"channel": "#general"},
    }


def value_for(schema: dict[str, Any]) -> Any:
    """A plain valid value for one property schema."""
    if "enum" in schema:
        return schema["enum"][0]
    kinds = [schema, *schema.get("anyOf", [])]
    kind = next((k for k in kinds if k.get("type") not in (None, "null")), {"type": "string"})
    return {"string": "hello", "integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}[kind["type"]]


def minimal_arguments(name: str, known: dict[str, str]) -> dict[str, Any]:
    schema = TOOLS[name].input_schema()
    arguments = {field: value_for(schema["properties"][field]) for field in schema.get("required", [])}
    return {**arguments, **needs(known).get(name, {})}


def is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


@pytest.fixture
def github(settings):
    """The GitHub stand-in, for the connector's tools of the small organisation's connection."""
    with github_server() as fake:
        settings.BRAIN_GITHUB_API_URL = fake.base
        fake.add_issue("acme/shop", 1, updated="2026-11-02T10:00:00Z", body="The deploy on Tuesday failed")
        fake.add_issue("acme/shop", 2, updated="2026-11-03T10:00:00Z", pull=True, title="Fix the deploy script")
        yield fake


@pytest.fixture
def slack(settings):
    """The Slack stand-in, for the small organisation's Slack connection."""
    with slack_server() as fake:
        settings.BRAIN_SLACK_API_URL = fake.base
        fake.add_channel("CGENERAL1", "general")
        yield fake


def test_every_tool_answers_structured_output_that_matches_its_output_schema(github, slack):
    _, actor, known = small_organisation()
    tested, failed = set(), {}
    for name in sorted(TOOLS, key=lambda n: n == "forget"):  # forget last: it removes a memory others may read
        spec = TOOLS[name]
        outcome = execute(actor, spec, minimal_arguments(name, known))
        if outcome.output is None:
            failed[name] = f"{outcome.code}: {outcome.message}"
            continue
        try:
            jsonschema.validate(outcome.output.model_dump(mode="json"), spec.output_schema())
        except jsonschema.ValidationError as exc:
            failed[name] = f"does not match its output schema: {exc.message}"
            continue
        if is_json_object(outcome.output.to_text()):
            failed[name] = "its text is raw JSON, not lines a model reads easily"
            continue
        tested.add(name)
    assert failed == {}
    assert tested == set(TOOLS)


def test_the_extra_arguments_name_only_registered_tools():
    assert set(
        needs(
            {
                "document_id": "",
                "memory_id": "",
                "entity": "",
                "commitment_id": "",
                "contradiction_id": "",
                "term_id": "",
                "job_id": "",
            }
        )
    ) <= set(TOOLS)


def test_every_tools_output_writes_its_own_readable_text_rather_than_the_json_default():
    """ToolOutput.to_text is JSON for want of better: every tool's text part is written for a model."""
    assert sorted(name for name, spec in TOOLS.items() if spec.output.to_text is ToolOutput.to_text) == []
