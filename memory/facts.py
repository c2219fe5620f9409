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
from brain.errors import InvalidArgument, NotFound, PermissionDenied
from memory.embedding import get_embedder
from memory.models import Document, Entity, Fact, Mention, Scope, Value

logger = logging.getLogger("brain.facts")

# Relations whose object has one holder at a time ("X is head of support": support has one head).
HELD_BY_ONE = {"head_of", "ceo_of", "cto_of", "cfo_of", "coo_of", "cmo_of", "director_of", "manager_of", "lead_of",
               "president_of", "chair_of"}  # fmt: skip
ENTITY_TYPES = ("person", "team", "customer", "deal", "project", "system", "product", "place", "term",
                "organisation", "other")  # fmt: skip


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


def get_or_create_entity(*, org_id: int, name: str, type: str = "other", aliases: list[str] | None = None) -> Entity:
    """The organisation's entity for a name or alias (case-insensitive), created when new."""
    name = " ".join(name.split())[:200]
    wanted = [a for a in dict.fromkeys([name, *(aliases or [])]) if a]
    existing = (
        Entity.objects.filter(org_id=org_id)
        .filter(Q(name__iexact=name) | Q(aliases__overlap=wanted) | Q(name__in=wanted))
        .order_by("pk")
        .first()
    )
    if existing is None:
        from memory.linking import KnownEntity, link_name

        # Candidates that look alike, or share the last or first word ("Ms Shah", "Priya"), for link_name to judge.
        words = name.split()
        alike = Q(name__trigram_similar=name) | Q(name__iendswith=f" {words[-1]}") | Q(name__istartswith=f"{words[0]} ")
        candidates = Entity.objects.filter(org_id=org_id).filter(alike)[:20]
        known = [KnownEntity(name=e.name, type=e.type, aliases=tuple(e.aliases)) for e in candidates]
        match = link_name(name, known)
        existing = next((e for e in candidates if match and e.name == match.name), None)
    if existing is not None:
        titles = ("mr", "mrs", "ms", "miss", "mx", "dr", "prof")
        fuller = [a for a in wanted if len(a.split()) > 1 and a.split()[0].strip(".").lower() not in titles]
        if fuller and existing.name.split()[0].strip(".").lower() in titles:
            # "Ms Shah" was seen first; "Priya Shah" becomes the entity's name, the title form an alias.
            existing.aliases = [*existing.aliases, existing.name]
            existing.name = fuller[0]
            existing.save(update_fields=["name", "aliases"])
        fresh = [a for a in wanted if a.lower() != existing.name.lower() and a not in existing.aliases]
        if fresh or (existing.type == "other" and type != "other"):
            existing.aliases = [*existing.aliases, *fresh][:50]
            existing.type = type if existing.type == "other" else existing.type
            existing.save(update_fields=["aliases", "type"])
        return existing
    entity, _ = Entity.objects.get_or_create(
        org_id=org_id, name__iexact=name, defaults={"name": name, "type": type if type in ENTITY_TYPES else "other",
                                                    "aliases": [a for a in wanted if a != name]}
    )  # fmt: skip
    return entity


def record_facts(*, document: Document, drafts: list[FactDraft], source: str = Fact.Source.EXTRACTED,
                 created_by_id: int | None = None, chunk_for: dict[int, int] | None = None) -> list[Fact]:  # fmt: skip
    """Store facts with their entities and values, embed them, and apply supersession."""
    if not drafts:
        return []
    vectors = get_embedder().embed([d.statement for d in drafts])
    entities: dict[str, Entity] = {}

    def entity(name: str | None) -> Entity | None:
        if not name:
            return None
        if name not in entities:
            entities[name] = get_or_create_entity(org_id=document.org_id, name=name)
            if source != Fact.Source.EXTRACTED:  # extraction records its mentions itself
                Mention.objects.get_or_create(entity=entities[name], document=document, surface=name[:200])
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
    current = Fact.objects.select_for_update().filter(
        org_id=new.org_id, single_valued=True, superseded_at__isnull=True, scope=new.scope
    )
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


def supersede_explicitly(*, actor: Actor, old_id: int, new: Fact) -> None:
    """remember(replaces_memory_id=...): the caller says the old memory is wrong or out of date."""
    from memory.graph import visible_facts

    old = visible_facts(actor=actor).filter(pk=old_id).first()
    if old is None:
        raise NotFound(f"No memory mem_{old_id} that you can see; nothing was replaced.")
    if old.superseded_at is None:
        Fact.objects.filter(pk=old.pk).update(superseded_at=timezone.now(), superseded_by=new)


@transaction.atomic
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
    scope: str = Scope.SHARED,
    title: str = "",
    description: str = "",
) -> Fact:
    """Store a stated fact now (searchable at once) and its document for passage search."""
    from memory.services import add_document

    if not actor.can_write:
        raise PermissionDenied("remember needs a token with the write scope.")
    if "personal" in actor.scopes and scope != Scope.PERSONAL:
        raise PermissionDenied("This connection may only store personal memories; pass scope personal.")
    if valid_from and valid_to and valid_to < valid_from:
        raise InvalidArgument("valid_to is before valid_from.")
    saved = add_document(
        actor=actor, title=title or content[:80], content=content, source_kind="remember", scope=scope,
        metadata={"description": description} if description else {},
    )  # fmt: skip
    for item in entities or []:
        get_or_create_entity(org_id=actor.org.pk, name=item["name"], type=item.get("type", "other"))
        if item.get("summary"):
            Entity.objects.filter(org=actor.org, name__iexact=item["name"], summary="").update(summary=item["summary"])
    drafts = [
        FactDraft(statement=content, kind=kind, subject=subject, valid_from=valid_from, valid_to=valid_to,
                  single_valued=False)
    ]  # fmt: skip
    drafts += [
        FactDraft(statement=f"{r['from']} {r['relation'].replace('_', ' ')} {r['to']}.", subject=r["from"],
                  object=r["to"], relation=r["relation"], valid_from=valid_from, valid_to=valid_to)
        for r in relations or []
    ]  # fmt: skip
    facts = record_facts(
        document=saved.document, drafts=drafts, source=Fact.Source.REMEMBERED, created_by_id=actor.user.pk
    )
    if replaces_memory_id is not None:
        supersede_explicitly(actor=actor, old_id=replaces_memory_id, new=facts[0])
    return facts[0]


@transaction.atomic
def forget(*, actor: Actor, memory_id: int) -> str:
    """Delete a memory the caller stored with remember, with its document; never anything else."""
    fact = Fact.objects.filter(org=actor.org, pk=memory_id).select_related("document").first()
    if fact is None or (fact.scope == Scope.PERSONAL and fact.owner_id != actor.user.pk):
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
    return statement
