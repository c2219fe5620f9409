"""The LLM's JSON schema is generated from the pydantic models that validate its answer."""

from __future__ import annotations

from typing import Any

from memory.extraction.vocabulary import ENTITY_TYPES, FACT_KINDS
from memory.graph.llm import SCHEMA

# The schema as it was written by hand before it was generated: strict structured outputs
# (every property required, nullable optionals, no extra properties).
_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_NULLABLE_DATE: dict[str, Any] = {"type": ["string", "null"], "description": "ISO date YYYY-MM-DD"}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    # Strict structured outputs need every property required and no extra ones.
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_VALUE_SCHEMA = _object(
    {
        "key": {"type": "string"},
        "number": {"type": ["number", "null"]},
        "date": _NULLABLE_DATE,
        "text": {"type": "string"},
        "unit": {"type": "string"},
    }
)
HAND_WRITTEN: dict[str, Any] = _object(
    {
        "entities": {
            "type": "array",
            "items": _object(
                {
                    "name": {"type": "string"},
                    "type": {"type": "string", "enum": list(ENTITY_TYPES)},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                }
            ),
        },
        "facts": {
            "type": "array",
            "items": _object(
                {
                    "statement": {"type": "string"},
                    "kind": {"type": "string", "enum": list(FACT_KINDS)},
                    "subject": _NULLABLE_STRING,
                    "object": _NULLABLE_STRING,
                    "relation": _NULLABLE_STRING,
                    "single_valued": {"type": "boolean"},
                    "valid_from": _NULLABLE_DATE,
                    "valid_to": _NULLABLE_DATE,
                    "values": {"type": "array", "items": _VALUE_SCHEMA},
                }
            ),
        },
    }
)


def test_the_generated_schema_is_the_strict_schema_the_endpoint_expects():
    assert SCHEMA == HAND_WRITTEN


def test_every_object_requires_all_its_properties_and_takes_no_others():
    def objects(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            found = [node] if node.get("type") == "object" else []
            return found + [o for value in node.values() for o in objects(value)]
        return [o for item in node for o in objects(item)] if isinstance(node, list) else []

    for item in objects(SCHEMA):
        assert item["required"] == list(item["properties"])
        assert item["additionalProperties"] is False
