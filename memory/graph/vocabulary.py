"""The graph's words, each list in one place: entity types, fact kinds, the roles one holder holds
at a time, and the titles that come before a surname. Public ids (``doc_12``, ``mem_7``, ``ent_3``,
``con_5``) are read by ``brain.ids``."""

from __future__ import annotations

ENTITY_TYPES: tuple[str, ...] = ("person", "team", "customer", "deal", "project", "system", "product", "place")
ENTITY_TYPES += ("term", "organisation", "other")
FACT_KINDS = ("fact", "decision", "preference", "event", "procedure")
# Relations whose object has one holder at a time ("X is head of support": support has one head).
HELD_BY_ONE = {"head_of", "ceo_of", "cto_of", "cfo_of", "coo_of", "cmo_of", "director_of", "manager_of", "lead_of",
               "president_of", "chair_of"}  # fmt: skip
HONORIFICS = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame"}
