"""The same contradiction raised twice is one: two pairs of facts that disagree about one thing in the
same way (the same two claims) are twins. The first entry is listed; the others point at it, and an
answer to any of them settles them all (``services.answer_contradiction``).

A side of a pair is its claim and its audience (category, scope and owner of the fact), so twins
are only ever read by the same people: nobody learns of a statement through a twin, and answering
one never touches a statement its reader could not have seen in the entry they answered.
"""

from __future__ import annotations

import hashlib

from memory.extraction.vocabulary import HELD_BY_ONE
from memory.graph.supersession import Claim
from memory.models import Fact


def side_key(fact: Fact) -> str:
    """What one side claims (the holder of a role, the object of a relation, or its values), and who reads it."""
    claim = Claim.of(fact)
    said: object = (claim.subject_id,) if claim.is_role else claim.values if claim.value_key else (claim.object_id,)
    return repr((said, fact.category_id, fact.scope, fact.owner_id))


def twin_key(thing: str, a: Fact, b: Fact) -> str:
    """The key two entries share when they are the same disagreement about ``thing``."""
    first, second = sorted((side_key(a), side_key(b)))
    return hashlib.sha256(f"{thing}|{first}|{second}".encode()).hexdigest()


def thing_of(fact: Fact) -> str:
    """What a single-valued fact states, as the nightly scan groups facts (its ``thing``)."""
    if fact.relation in HELD_BY_ONE and fact.object_id is not None:
        return f"role:{fact.relation}:{fact.object_id}"
    return f"thing:{fact.subject_id}:{fact.relation}:{fact.value_key}"


def twin_key_of_pair(a: Fact, b: Fact) -> str:
    """The twin key of a pair a person raises, when both facts state the same single-valued thing."""
    same = a.single_valued and b.single_valued and a.subject_id is not None and thing_of(a) == thing_of(b)
    return twin_key(thing_of(a), a, b) if same else ""
