"""Reads that tie the graph to its documents, for one caller: the facts behind passages, a
document's facts and entities, the documents that name an entity, and what a member remembered.

Every read starts from ``visible_facts``, ``readable`` or ``visible_mentions`` (memory.access), so
nothing here shows a row, a name or a count the caller's own token would not see.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.db.models import Q

from brain.core.actors import Actor
from memory.access import believed_filter, fact_not_flagged, readable
from memory.graph.entity_views import visible_mentions
from memory.graph.reads import believed, visible_facts
from memory.models import Document, Fact

SHOWN = 200


def facts_behind(
    *, actor: Actor, passages: Sequence[tuple[int, int]], as_of: date | None = None
) -> dict[int, list[Fact]]:
    """The facts believed (now, or at the end of ``as_of``) that each passage states, keyed by
    chunk id; ``passages`` are (chunk id, document id) pairs. A remembered fact belongs to its
    whole memory rather than to one passage: it goes with the first passage of its document."""
    chunk_ids = [chunk for chunk, _ in passages]
    first_of: dict[int, int] = {}
    for chunk, document in passages:
        first_of.setdefault(document, chunk)
    facts = believed(visible_facts(actor=actor), as_of=as_of).filter(
        Q(chunk_id__in=chunk_ids) | Q(document_id__in=list(first_of), chunk__isnull=True)
    )
    behind: dict[int, list[Fact]] = {chunk: [] for chunk in chunk_ids}
    for fact in facts.select_related("document").order_by("recorded_at", "pk"):
        key = fact.chunk_id if fact.chunk_id in behind else first_of.get(fact.document_id or 0)
        if key is not None:
            behind[key].append(fact)
    return behind


def document_facts(*, actor: Actor, document: Document) -> list[Fact]:
    """Every fact taken from (or remembered as) one document, replaced ones too, oldest first: also
    those shown elsewhere through the first document that said them (twins)."""
    rows = Fact.objects.filter(readable(actor) & fact_not_flagged(), document=document).select_related("document")
    return list(rows.order_by("recorded_at", "pk")[:SHOWN])


def document_entity_ids(*, actor: Actor, document: Document) -> list[int]:
    """The entities a document names (when the caller may read it), in the order first named."""
    mentions = visible_mentions(actor=actor).filter(document=document).order_by("pk")
    return list(dict.fromkeys(mentions.values_list("entity_id", flat=True)))[:SHOWN]


def documents_mentioning(*, actor: Actor, entity_id: int, as_of: date | None = None, limit: int = 50) -> list[Document]:
    """Readable documents that name the entity, newest first: the versions current now, or those
    current at the end of ``as_of`` (recorded by then and not yet replaced)."""
    named = visible_mentions(actor=actor).filter(entity_id=entity_id).values("document_id")
    documents = Document.objects.filter(readable(actor), believed_filter(as_of), pk__in=named)
    return list(documents.order_by("-recorded_at", "-pk")[:limit])


def remembered_by(*, actor: Actor) -> list[Fact]:
    """What the caller stated through remember and can still see, newest first, replaced ones too:
    the memories ``forget`` lets them remove."""
    mine = visible_facts(actor=actor).filter(source=Fact.Source.REMEMBERED, created_by=actor.user)
    return list(mine.select_related("document").order_by("-recorded_at", "-pk")[:SHOWN])
