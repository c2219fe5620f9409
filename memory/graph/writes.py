"""Writes to the graph: facts with their entities, mentions and values."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date

from django.db import transaction
from django.db.models import prefetch_related_objects
from django.utils import timezone

from memory.extraction import ExtractedValue
from memory.graph.entities import clean_name, get_or_create_entity, lock_names, mention
from memory.graph.supersession import apply_supersession
from memory.graph.twins import join_twins
from memory.index.serving import Vectors, confirm, embed_for
from memory.models import Document, Entity, Fact, Value

logger = logging.getLogger("brain.facts")


@dataclass
class FactDraft:
    """A fact about to be recorded, from extraction or from remember."""

    statement: str
    kind: str = "fact"
    subject: str | None = None
    object: str | None = None
    relation: str = ""
    single_valued: bool = False
    valid_from: date | None = None
    valid_to: date | None = None
    values: list[ExtractedValue] = field(default_factory=list)
    dated_from_upload: bool = False  # its date was read against the day it was saved, for want of its own
    topic: str = ""  # what it states one value of, in words (``memory.extraction.topics``)


def embed_drafts(org_id: int, drafts: list[FactDraft]) -> Vectors:
    """The drafts' vectors of the organisation's models; called before any transaction opens, as
    the model may be remote."""
    return embed_for(org_id, [d.statement for d in drafts])


def record_facts(
    *,
    document: Document,
    drafts: list[FactDraft],
    source: str = Fact.Source.EXTRACTED,
    created_by_id: int | None = None,
    chunk_for: dict[int, int] | None = None,
    vectors: Vectors | None = None,
    linked: dict[str, Entity] | None = None,
) -> list[Fact]:
    """Store facts with their entities, mentions and values, and apply supersession.

    Pass ``vectors`` (from ``embed_drafts``) when calling inside a transaction, and ``linked``
    (name -> entity) for names the caller has just linked and mentioned in this document.
    """
    if not drafts:
        return []
    vectors = embed_drafts(document.org_id, drafts) if vectors is None else vectors
    for draft in drafts:
        if draft.valid_from and draft.valid_to and draft.valid_to < draft.valid_from:
            logger.info("dropping an end date before the start in %r", draft.statement[:80])
            draft.valid_to = None  # a window that ends before it starts says nothing about the end
    entities: dict[str, Entity] = dict(linked or {})

    def entity(name: str | None) -> Entity | None:
        if not name or not clean_name(name):
            return None
        if name not in entities:
            entities[name] = get_or_create_entity(document=document, name=name, locked=True)
            mention(entity=entities[name], document=document, surface=name)
        return entities[name]

    stated_on = (document.occurred_at or document.recorded_at).date()
    recorded_at = document.recorded_at if source == Fact.Source.EXTRACTED else timezone.now()
    with transaction.atomic():
        lock_names(org_id=document.org_id, names=[n for d in drafts for n in (d.subject, d.object) if n])
        vectors = confirm(vectors, document.org_id, [d.statement for d in drafts])
        facts = Fact.objects.bulk_create(
            [
                Fact(
                    org_id=document.org_id,
                    statement=draft.statement,
                    kind=draft.kind if draft.kind in Fact.Kind.values else Fact.Kind.FACT,
                    subject=entity(draft.subject),
                    object=entity(draft.object),
                    relation=draft.relation[:80],
                    value_key=(draft.values[0].key if draft.values else "")[:80],
                    single_valued=draft.single_valued,
                    valid_from=draft.valid_from,
                    valid_to=draft.valid_to,
                    recorded_at=recorded_at,
                    source=source,
                    topic=draft.topic[:200],
                    document=document,
                    chunk_id=(chunk_for or {}).get(index),
                    category_id=document.category_id,
                    scope=document.scope,
                    owner_id=document.owner_id,
                    created_by_id=created_by_id,
                    dated_from_upload=draft.dated_from_upload,
                    **vectors.fields(index),
                )
                for index, draft in enumerate(drafts)
            ]
        )
        Value.objects.bulk_create(
            [
                Value(
                    org_id=document.org_id,
                    entity=fact.subject,
                    fact=fact,
                    key=value.key[:80],
                    number=value.number,
                    date=value.date,
                    text=value.text[:500],
                    unit=value.unit[:20],
                    stated_on=stated_on,
                )
                for fact, draft in zip(facts, drafts, strict=True)
                if fact.subject is not None
                for value in draft.values
            ]
        )
        # One query for the new facts' values, which supersession and twins compare per fact.
        prefetch_related_objects(facts, "values")
        for fact in facts:
            apply_supersession(fact)
        join_twins(facts)
    return facts
