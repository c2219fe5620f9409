"""One input contract for every save: the same limits whichever way a document comes in, checked by
``add_document`` itself (MCP and REST check them first with the same numbers, from ``memory.limits``)."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from brain.core.errors import InvalidArgument
from conftest import make_actor, make_token
from memory.documents.saving import add_document
from memory.limits import FIELD_CHARS, MAX_METADATA_CHARS
from memory.mcp_tools.documents import AddKnowledgeArgs
from memory.models import Document

pytestmark = pytest.mark.django_db


def test_the_document_columns_and_both_argument_models_take_their_lengths_from_one_place():
    rest = __import__("memory.api", fromlist=["DocumentIn"]).DocumentIn
    for name, most in FIELD_CHARS.items():
        assert getattr(Document._meta.get_field(name), "max_length", None) == most
        assert AddKnowledgeArgs.model_json_schema()["properties"][name]["maxLength"] == most
        assert rest.model_json_schema()["properties"][name]["maxLength"] == most


@pytest.mark.parametrize("name", sorted(FIELD_CHARS))
def test_add_document_refuses_a_field_past_its_length_and_saves_nothing(org, name):
    fields: dict[str, Any] = {"title": "A note", "content": "Some words.", name: "x" * (FIELD_CHARS[name] + 1)}
    with pytest.raises(InvalidArgument, match=name):
        add_document(actor=make_actor(org), **fields)
    assert not Document.objects.filter(org=org).exists()


def test_add_document_refuses_metadata_past_the_limit_on_every_way_in(org):
    huge = {"notes": "y" * (MAX_METADATA_CHARS + 1)}
    with pytest.raises(InvalidArgument, match="metadata is too large"):
        add_document(actor=make_actor(org), title="A note", content="Some words.", metadata=huge)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org).plaintext}")
    answer = client.post(
        "/api/v1/documents", {"title": "A note", "content": "Some words.", "metadata": huge}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_argument"
    assert "metadata is too large" in answer.json()["message"]
    assert not Document.objects.filter(org=org).exists()
