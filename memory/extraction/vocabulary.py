"""The graph's words, each list in one place: entity types, fact kinds, the roles one holder holds
at a time, the titles that come before a surname, and the words that say the world changed.
Public ids (``doc_12``, ``mem_7``, ``ent_3``, ``con_5``) are read by ``brain.infra.ids``."""

from __future__ import annotations

import re

ENTITY_TYPES: tuple[str, ...] = ("person", "team", "customer", "deal", "project", "system", "product", "place")
ENTITY_TYPES += ("term", "organisation", "other")
FACT_KINDS = ("fact", "decision", "preference", "event", "procedure")
# Relations whose object has one holder at a time ("X is head of support": support has one head).
HELD_BY_ONE = {"head_of", "ceo_of", "cto_of", "cfo_of", "coo_of", "cmo_of", "director_of", "manager_of", "lead_of",
               "president_of", "chair_of", "owner_of"}  # fmt: skip
HONORIFICS = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame"}

# Words by which a statement says the world changed (not merely that a source sees it otherwise):
# "the price is now 52k", "Priya took over support", "from now on invoices go to Ana".
CHANGE_WORDS = re.compile(
    r"\b(?:is|are) now\b|\bnow (?:is|are|costs?|leads?|heads?|owns?|runs?)\b|\b(?:became|becomes|become)\b"
    r"|\bhas become\b|\b(?:changed|changes|switched|moved) (?:to|over)\b|\bwas changed\b|\breplac(?:ed|es)\b"
    r"|\b(?:took|takes|taken) over\b|\bfrom now on\b|\bno longer\b|\bstarting (?:today|now|on)\b"
    r"|\bwith effect from\b|\beffective (?:from|on|immediately|today)\b|\bsucceed(?:ed|s)\b|\bcorrect(?:ion|ed)\b"
    r"|\bnew (?:price|owner|head|lead|rate)\b|\bnow\b|\binstead of\b|\brather than\b|,\s*not\b"
    r"|^\W*(?:update|updated|correction|change)\s*:|\b(?:moved|changed|pushed|postponed|delayed|brought forward) to\b",
    re.IGNORECASE,
)
