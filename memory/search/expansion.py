"""Questions that describe a person instead of naming them: "what did the person who leads
support say about the outage?". The graph knows who leads support; search then looks for what
that person said and what was said about them.

Only the caller's own view of the graph is used (facts they may read, names from mentions they
may read), and only when the question describes someone by a role, so other questions cost
nothing.
"""

from __future__ import annotations

import re
from datetime import date

from brain.core.actors import Actor
from memory.extraction.vocabulary import HELD_BY_ONE
from memory.graph import reads as graph
from memory.graph.entity_views import entities_named, entity_views

ROLE_QUESTION = re.compile(
    r"\b(?:who|person|one|someone|people|colleague)\s+(?:who\s+|that\s+)?"
    r"(?:leads?|heads?|runs?|manages?|owns?|chairs?|directs?|is\s+in\s+charge\s+of)\b"
    r"|\b(?:head|lead|leader|manager|owner|director|chair|ceo|cto|cfo|coo)\s+of\b",
    re.I,
)
ROLE_VERBS = {"leads", "heads", "runs", "manages", "owns", "chairs", "directs"}
MAX_PEOPLE = 3


def people_behind(*, actor: Actor, question: str, as_of: date | None = None) -> list[str]:
    """Names of whoever holds the role the question describes, as the caller sees them, as things
    stood at the end of ``as_of`` (now without it)."""
    if not ROLE_QUESTION.search(question):
        return []
    named = entities_named(actor=actor, text=question, limit=5)
    if not named:
        return []
    facts = graph.believed(graph.visible_facts(actor=actor), as_of=as_of).filter(
        object_id__in=named, subject__isnull=False
    )
    holders = [
        subject
        for subject, relation in facts.order_by("-recorded_at", "-pk").values_list("subject_id", "relation")[:50]
        if relation in HELD_BY_ONE or relation.endswith("_of") or relation in ROLE_VERBS
    ]
    holders = list(dict.fromkeys(h for h in holders if h not in named))[:MAX_PEOPLE]
    views = entity_views(actor=actor, entity_ids=holders)
    return [views[h].name for h in holders if h in views]
