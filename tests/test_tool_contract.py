"""Every registered tool, run through execute on a small organisation, answers what its output schema says.

The arguments are built from each tool's input schema (the required fields, with a value of their
type), so a new tool is covered the day it is registered; a tool that needs a real id or some
setup gets it in ``NEEDS``. A tool missing from the walk fails the test."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from brain.actors import Actor
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import Membership, Organisation
from brain.services import mark_memory_built
from conftest import make_actor, make_org, make_user
from contacts.models import Contact
from contacts.services import save_contact_topics
from memory.graph.memories import remember
from memory.models import Entity
from memory.tests.factories import save
from skills.services import approve_version, publish_skill

pytestmark = pytest.mark.django_db

DOCUMENTS = {
    "Travel policy": "Flights over six hours may be booked in premium economy. Hotels are capped at 180 EUR a night.",
    "Deploy runbook": "Deploys run from the main branch every Tuesday. Roll back with the deploy tool's undo command.",
    "Office move": "The Leeds office moves to Wellington Street on 1 March 2025. Parking stays on the old site.",
}
MEMORIES = [
    ("Atlas is owned by the platform team.", "Atlas"),
    ("The platform team is led by Priya Shah.", "Platform team"),
    ("The travel budget for 2025 is 40,000 EUR.", "Travel budget"),
]


def small_organisation() -> tuple[Organisation, Actor, dict[str, str]]:
    """An organisation with three ingested documents, three remembered facts, an approved skill
    and a contact; returns its member actor and the ids tools need."""
    org = make_org()
    mark_memory_built(org=org)
    admin = make_actor(org, make_user(org, role=Membership.ADMIN))
    actor = make_actor(org)
    documents = [save(actor, title, content) for title, content in DOCUMENTS.items()]
    memories = [remember(actor=actor, content=content, subject=subject) for content, subject in MEMORIES]
    version = publish_skill(actor=actor, slug="deploy-guide", name="Deploy guide", content="Deploy on Tuesdays.")
    approve_version(actor=admin, version_id=version.pk)
    contact = Contact.objects.create(
        org=org, name="Sam Ops", topics="deploys, runbooks", email="sam@example.com", channels=["email"]
    )
    save_contact_topics(contact)
    known = {
        "document_id": documents[0].public_id,
        "memory_id": memories[-1].public_id,
        "entity": Entity.objects.filter(org=org).order_by("pk").values_list("name", flat=True)[0],
    }
    return org, actor, known


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


def test_every_tool_answers_structured_output_that_matches_its_output_schema():
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
        tested.add(name)
    assert failed == {}
    assert tested == set(TOOLS)


def test_the_extra_arguments_name_only_registered_tools():
    assert set(needs({"document_id": "", "memory_id": "", "entity": ""})) <= set(TOOLS)
