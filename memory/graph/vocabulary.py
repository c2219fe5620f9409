"""The graph's words: entity types and fact kinds."""

from __future__ import annotations

ENTITY_TYPES: tuple[str, ...] = ("person", "team", "customer", "deal", "project", "system", "product", "place")
ENTITY_TYPES += ("term", "organisation", "other")
FACT_KINDS = ("fact", "decision", "preference", "event", "procedure")
