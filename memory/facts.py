"""Writes to the graph: entities, facts and values, supersession, remember and forget."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from brain.actors import Actor
from brain.audit import record_audit
from brain.errors import InvalidArgument, NotFound, PermissionDenied
from brain.models import Category
from memory.embedding import get_embedder
from memory.entities import clean_name, get_or_create_entity, mention
from memory.models import Document, Entity, Fact, Scope, Value

logger = logging.getLogger("brain.facts")

# Relations whose object has one holder at a time ("X is head of support": support has one head).
HELD_BY_ONE = {"head_of", "ceo_of", "cto_of", "cfo_of", "coo_of", "cmo_of", "director_of", "manager_of", "lead_of",
               "president_of", "chair_of"}  # fmt: skip


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
    values: list[dict[str, Any]] = field(default_factory=list)  # key, number, date, text, unit


def embed_drafts(drafts: list[FactDraft]) -> list[Any]:
    """The drafts' vectors; called before any transaction opens, as the model may be remote."""
    return list(get_embedder().embed([d.statement for d in drafts])) if drafts else []


def record_facts(*, document: Document, drafts: list[FactDraft], source: str = Fact.Source.EXTRACTED,
                 created_by_id: int | None = None, chunk_for: dict[int, int] | None = None,
                 vectors: list[Any] | None = None) -> list[Fact]:  # fmt: skip
    """Store facts with their entities, mentions and values, and apply supersession.

    Pass ``vectors`` (from ``embed_drafts``) when calling inside a transaction.
    """
    if not drafts:
        return []
    vectors = embed_drafts(drafts) if vectors is None else vectors
    model = get_embedder().name[:200]
    for draft in drafts:
        if draft.valid_from and draft.valid_to and draft.valid_to < draft.valid_from:
            logger.info("dropping an end date before the start in %r", draft.statement[:80])
            draft.valid_to = None  # a window that ends before it starts says nothing about the end
    entities: dict[str, Entity] = {}

    def entity(name: str | None) -> Entity | None:
        if not name or not clean_name(name):
            return None
        if name not in entities:
            entities[name] = get_or_create_entity(document=document, name=name)
            mention(entity=entities[name], document=document, surface=name)
        return entities[name]

    stated_on = (document.occurred_at or document.recorded_at).date()
    recorded_at = document.recorded_at if source == Fact.Source.EXTRACTED else timezone.now()
    with transaction.atomic():
        facts = Fact.objects.bulk_create(
            [
                Fact(
                    org_id=document.org_id, statement=draft.statement,
                    kind=draft.kind if draft.kind in Fact.Kind.values else Fact.Kind.FACT,
                    subject=entity(draft.subject), object=entity(draft.object), relation=draft.relation[:80],
                    value_key=(draft.values[0]["key"] if draft.values else "")[:80], single_valued=draft.single_valued,
                    valid_from=draft.valid_from, valid_to=draft.valid_to, recorded_at=recorded_at, source=source,
                    document=document, chunk_id=(chunk_for or {}).get(index), category_id=document.category_id,
                    scope=document.scope, owner_id=document.owner_id, created_by_id=created_by_id, embedding=vector,
                    embedding_model=model,
                )
                for index, (draft, vector) in enumerate(zip(drafts, vectors, strict=True))
            ]
        )  # fmt: skip
        Value.objects.bulk_create(
            [
                Value(
                    org_id=document.org_id, entity=fact.subject, fact=fact, key=value["key"][:80],
                    number=value.get("number"), date=value.get("date"), text=str(value.get("text") or "")[:500],
                    unit=str(value.get("unit") or "")[:20], stated_on=stated_on,
                )
                for fact, draft in zip(facts, drafts, strict=True)
                if fact.subject is not None
                for value in draft.values
            ]
        )  # fmt: skip
        for fact in facts:
            apply_supersession(fact)
    return facts


def _overlaps(a: Fact, b: Fact) -> bool:
    starts_before_end = a.valid_from is None or b.valid_to is None or a.valid_from <= b.valid_to
    ends_after_start = a.valid_to is None or b.valid_from is None or a.valid_to >= b.valid_from
    return starts_before_end and ends_after_start


def apply_supersession(new: Fact) -> None:
    """A new fact supersedes an older one only when both are about the same subject, state the same
    single-valued relation or value key, say something different, and their validity overlaps.

    - the new one starts later: the old one is closed at that date and superseded by it;
    - the new one starts earlier (it arrived late, about an earlier time): the new one is closed
      where the old one begins, and the old one stands;
    - same start (a correction): the old one is superseded and keeps its window.
    Unrelated facts are never touched, and nothing is deleted.
    """
    if not new.single_valued or new.subject_id is None or not (new.relation or new.value_key):
        return
    # Only statements of the same audience replace each other: across it, a reader would see a
    # fact marked replaced by one they cannot see (or lose one for a reason they cannot know).
    current = Fact.objects.select_for_update().filter(
        org_id=new.org_id, single_valued=True, superseded_at__isnull=True, scope=new.scope,
        category_id=new.category_id,
    )  # fmt: skip
    if new.relation in HELD_BY_ONE and new.object_id is not None:
        # A role is single-valued on its object: support has one head at a time, whoever it is.
        rivals = current.filter(relation=new.relation, object_id=new.object_id).exclude(subject_id=new.subject_id)
    else:
        rivals = current.filter(subject_id=new.subject_id, relation=new.relation, value_key=new.value_key)
    rivals = rivals.exclude(pk=new.pk)
    if new.scope == Scope.PERSONAL:
        rivals = rivals.filter(owner_id=new.owner_id)
    now = new.recorded_at  # the old belief ends when the new one was recorded
    for old in rivals:
        if not _overlaps(old, new) or _same_claim(old, new):
            continue
        if old.valid_from and new.valid_from and new.valid_from < old.valid_from:
            new.valid_to = old.valid_from
            new.save(update_fields=["valid_to"])
            continue
        if old.valid_from and new.valid_from and new.valid_from > old.valid_from and old.valid_to is None:
            old.valid_to = new.valid_from
        old.superseded_at, old.superseded_by = now, new
        old.save(update_fields=["valid_to", "superseded_at", "superseded_by"])


def _same_claim(old: Fact, new: Fact) -> bool:
    if new.relation in HELD_BY_ONE and new.object_id is not None:
        return old.subject_id == new.subject_id
    if new.relation and old.object_id != new.object_id:
        return False
    if new.value_key:
        old_values = sorted((v.number, v.date, v.text) for v in old.values.all())
        new_values = sorted((v.number, v.date, v.text) for v in new.values.all())
        return old_values == new_values
    return old.object_id == new.object_id


def replaceable_memory(*, actor: Actor, memory_id: int, scope: str) -> Fact:
    """The memory ``remember(replaces_memory_id=...)`` may replace: one the caller sees, with the
    audience the new memory will have (remembered memories go to the default category)."""
    from memory.graph import visible_facts

    old = visible_facts(actor=actor).filter(pk=memory_id).select_related("category").first()
    if old is None:
        raise NotFound(f"No memory mem_{memory_id} that you can see; nothing was replaced.")
    same_owner = scope != Scope.PERSONAL or old.owner_id == actor.user.pk
    if old.scope != scope or old.category.slug != Category.DEFAULT_SLUG or not same_owner:
        raise InvalidArgument(
            f"mem_{memory_id} is seen by other people than this memory would be (its scope or category "
            "differs), so it cannot be replaced by it. Remember the correction with the same scope as the "
            "original, or ask an admin to correct a document's facts at their source."
        )
    return old


def supersede_explicitly(*, old: Fact, new: Fact) -> None:
    """The caller says ``old`` is wrong or out of date: it and the relations remembered with it end."""
    replaced = Fact.objects.filter(pk=old.pk, superseded_at__isnull=True)
    if old.source == Fact.Source.REMEMBERED and old.document_id is not None:
        siblings = Fact.objects.filter(document_id=old.document_id, source=Fact.Source.REMEMBERED)
        replaced = Fact.objects.filter(Q(pk=old.pk) | Q(pk__in=siblings), superseded_at__isnull=True)
    replaced.update(superseded_at=new.recorded_at, superseded_by=new)


def remember(
    *,
    actor: Actor,
    content: str,
    kind: str = "fact",
    subject: str | None = None,
    valid_from: date | None = None,
    valid_to: date | None = None,
    replaces_memory_id: int | None = None,
    entities: list[dict[str, str]] | None = None,
    relations: list[dict[str, str]] | None = None,
    scope: str | None = None,
    title: str = "",
    description: str = "",
) -> Fact:
    """Store a stated fact now (searchable at once) and its document for passage search.

    ``scope`` defaults to personal on a connection that may only store personal memories, and
    to shared otherwise.
    """
    from memory.services import add_document

    if not actor.can_write:
        raise PermissionDenied("remember needs a token with the write scope.")
    scope = scope or (Scope.PERSONAL if "personal" in actor.scopes else Scope.SHARED)
    if "personal" in actor.scopes and scope != Scope.PERSONAL:
        raise PermissionDenied("This connection may only store personal memories; pass scope personal.")
    if valid_from and valid_to and valid_to < valid_from:
        raise InvalidArgument("valid_to is before valid_from.")
    replaced = (
        replaceable_memory(actor=actor, memory_id=replaces_memory_id, scope=scope) if replaces_memory_id else None
    )
    drafts = [
        FactDraft(statement=content, kind=kind, subject=subject, valid_from=valid_from, valid_to=valid_to,
                  single_valued=False)
    ]  # fmt: skip
    drafts += [
        FactDraft(statement=f"{r['from']} {r['relation'].replace('_', ' ')} {r['to']}.", subject=r["from"],
                  object=r["to"], relation=r["relation"], valid_from=valid_from, valid_to=valid_to)
        for r in relations or []
    ]  # fmt: skip
    vectors = embed_drafts(drafts)
    with transaction.atomic():
        saved = add_document(
            actor=actor, title=title or content[:80], content=content, source_kind="remember", scope=scope,
            metadata={"description": description} if description else {},
        )  # fmt: skip
        for item in entities or []:
            # What this memory says an entity is belongs to the memory: its readers see it, no one else.
            named = get_or_create_entity(document=saved.document, name=item["name"], type=item.get("type", "other"))
            mention(entity=named, document=saved.document, surface=item["name"], type=item.get("type", ""),
                    summary=item.get("summary", ""))  # fmt: skip
        facts = record_facts(document=saved.document, drafts=drafts, source=Fact.Source.REMEMBERED,
                             created_by_id=actor.user.pk, vectors=vectors)  # fmt: skip
        if replaced is not None:
            supersede_explicitly(old=replaced, new=facts[0])
            record_audit(actor=actor, action="memory.replaced", target=replaced.public_id,
                         details={"by": facts[0].public_id})  # fmt: skip
    return facts[0]


@transaction.atomic
def forget(*, actor: Actor, memory_id: int) -> str:
    """Delete a memory the caller stored with remember, with its document; never anything else.

    A memory the caller cannot see is answered exactly as one that does not exist.
    """
    from memory.graph import visible_facts

    fact = visible_facts(actor=actor).filter(pk=memory_id).select_related("document").first()
    if fact is None:
        raise NotFound(f"No memory mem_{memory_id} that you can see.")
    if fact.source != Fact.Source.REMEMBERED:
        raise PermissionDenied(
            f"mem_{memory_id} comes from an uploaded or synced document; forget only removes what was stored "
            "with remember. Ask an admin to change the source instead."
        )
    if fact.created_by_id != actor.user.pk:
        raise PermissionDenied(f"mem_{memory_id} was remembered by someone else; only they can forget it.")
    statement = fact.statement
    if fact.document is not None and fact.document.source_kind == "remember":
        fact.document.delete()  # its chunks, facts and values go with it
    else:
        fact.delete()
    record_audit(
        actor=actor, action="memory.forgotten", target=f"mem_{memory_id}", details={"statement": statement[:200]}
    )
    return statement
