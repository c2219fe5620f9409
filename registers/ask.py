"""What the registers add to ask_company_memory's evidence: the definitions of the organisation's
words a question uses (glossary on), and, for a high-risk question, the open contradictions
touching its evidence (contradictions on). Both only from what the caller may read."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from brain.actors import Actor
from brain.selectors import enabled_features
from memory.models import Document, Fact
from registers.contradictions.services import visible_contradictions
from registers.glossary.services import definitions_in
from registers.models import Contradiction, Term

LIMIT = 5


@dataclass
class RegisterEvidence:
    definitions: list[Term] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)


def for_question(*, actor: Actor, question: str, claims: list[Fact], documents: list[Document],
                 high_risk: bool) -> RegisterEvidence:  # fmt: skip
    on = enabled_features(actor=actor)
    found = RegisterEvidence()
    if "glossary" in on:
        found.definitions = definitions_in(actor=actor, text=question, limit=LIMIT)
    if high_risk and "contradictions" in on and (claims or documents):
        facts = Fact.objects.filter(Q(pk__in=[c.pk for c in claims]) | Q(document__in=documents)).values("pk")
        touching = Q(fact_a__in=facts) | Q(fact_b__in=facts)
        found.contradictions = list(
            visible_contradictions(actor=actor).filter(touching, state=Contradiction.State.OPEN).order_by("-pk")[:LIMIT]
        )
    return found
