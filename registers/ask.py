"""What the registers add to ask_company_memory's evidence: the definitions of the organisation's
words a question uses (glossary on), and, for a high-risk question, the open contradictions
touching its evidence (contradictions on). Both only from what the caller may read."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from brain.core.actors import Actor
from brain.core.selectors import enabled_features
from memory.mcp_tools.answers import AskAdditions, AskContext, DefinitionOut
from memory.models import Document, Fact
from registers.contradictions.services import open_about, visible_contradictions
from registers.glossary.services import definitions_in
from registers.mcp_tools.contradictions import shown
from registers.models import Contradiction, Term

LIMIT = 5


@dataclass
class RegisterEvidence:
    definitions: list[Term] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)


def for_question(
    *, actor: Actor, question: str, claims: list[Fact], documents: list[Document], high_risk: bool
) -> RegisterEvidence:
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


def add_to_answer(context: AskContext) -> AskAdditions:
    """What the registers add to ask_company_memory's answer (plugged into
    ``memory.mcp_tools.answers.ASK_ADDITIONS``)."""
    found = for_question(
        actor=context.actor,
        question=context.question,
        claims=context.claims,
        documents=context.documents,
        high_risk=context.high_risk,
    )
    return AskAdditions(
        definitions=[DefinitionOut(id=t.public_id, term=t.term, definition=t.definition) for t in found.definitions],
        open_contradictions=[shown(c) for c in found.contradictions],
    )


def flag_facts(actor: Actor, fact_ids: set[int]) -> dict[int, list[str]]:
    """The open contradictions about these facts, when the organisation keeps the register (plugged
    into ``memory.mcp_tools.answers.FACT_FLAGS``)."""
    if "contradictions" not in enabled_features(actor=actor):
        return {}
    return open_about(actor=actor, fact_ids=fact_ids)
