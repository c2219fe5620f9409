"""Memories stated by people through remember, and forget."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.personal import default_scope, require_may_write
from brain.infra.ids import format_id
from brain.models import Category
from memory.access import audience_key, in_the_trail
from memory.documents.saving import add_document
from memory.documents.trash import Trashed, delete_documents, move_to_trash, purge_after
from memory.graph.entities import get_or_create_entity, mention
from memory.graph.reads import visible_facts
from memory.graph.writes import FactDraft, embed_drafts, record_facts
from memory.models import Chunk, Document, Fact


def replaceable_memory(*, actor: Actor, memory_id: int, scope: str) -> Fact:
    """The memory ``remember(replaces_memory_id=...)`` may replace: one the caller sees, with the
    audience the new memory will have (remembered memories go to the default category)."""
    old = visible_facts(actor=actor).filter(pk=memory_id).select_related("category").first()
    if old is None:
        raise NotFound(f"No memory mem_{memory_id} that you can see; nothing was replaced.")
    same_readers = audience_key(old.scope, old.owner_id, old.category_id) == audience_key(
        scope, actor.user.pk, old.category_id
    )
    if old.category.slug != Category.DEFAULT_SLUG or not same_readers:
        raise InvalidArgument(
            f"mem_{memory_id} is seen by other people than this memory would be (its scope or category "
            "differs), so it cannot be replaced by it. Remember the correction with the same scope as the "
            "original, or ask an admin to correct a document's facts at their source."
        )
    return old


def supersede_explicitly(*, old: Fact, new: Fact, at: datetime | None = None) -> None:
    """The caller says ``old`` is wrong or out of date: it and the relations remembered with it end
    (when ``new`` was recorded, or at ``at``: a person's answer ends the belief when it is given)."""
    replaced = Fact.objects.filter(pk=old.pk, superseded_at__isnull=True)
    if old.source == Fact.Source.REMEMBERED and old.document_id is not None:
        siblings = Fact.objects.filter(document_id=old.document_id, source=Fact.Source.REMEMBERED)
        replaced = Fact.objects.filter(Q(pk=old.pk) | Q(pk__in=siblings), superseded_at__isnull=True)
    replaced.update(superseded_at=at or new.recorded_at, superseded_by=new)


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
    if not actor.can_write:
        raise PermissionDenied("remember needs a token with the write scope.")
    scope = scope or default_scope(actor)
    require_may_write(actor, scope=scope, what="A shared memory")
    if valid_from and valid_to and valid_to < valid_from:
        raise InvalidArgument("valid_to is before valid_from.")
    replaced = (
        replaceable_memory(actor=actor, memory_id=replaces_memory_id, scope=scope) if replaces_memory_id else None
    )
    drafts = [
        FactDraft(
            statement=content, kind=kind, subject=subject, valid_from=valid_from, valid_to=valid_to, single_valued=False
        )
    ]
    drafts += [
        FactDraft(
            statement=f"{r['from']} {r['relation'].replace('_', ' ')} {r['to']}.",
            subject=r["from"],
            object=r["to"],
            relation=r["relation"],
            valid_from=valid_from,
            valid_to=valid_to,
        )
        for r in relations or []
    ]
    vectors = embed_drafts(actor.org.pk, drafts)
    with transaction.atomic():
        saved = add_document(
            actor=actor,
            title=title or content[:80],
            content=content,
            source_kind="remember",
            scope=scope,
            metadata={"description": description} if description else {},
        )
        for item in entities or []:
            # What this memory says an entity is belongs to the memory: its readers see it, no one else.
            named = get_or_create_entity(
                document=saved.document, name=item["name"], type=item.get("type", "other"), confident="type" in item
            )
            mention(
                entity=named,
                document=saved.document,
                surface=item["name"],
                type=item.get("type", ""),
                summary=item.get("summary", ""),
            )
        facts = record_facts(
            document=saved.document,
            drafts=drafts,
            source=Fact.Source.REMEMBERED,
            created_by_id=actor.user.pk,
            vectors=vectors,
        )
        if replaced is not None:
            supersede_explicitly(old=replaced, new=facts[0])
            record_audit(
                actor=actor, action="memory.replaced", target=replaced.public_id, details={"by": facts[0].public_id}
            )
    return facts[0]


def withdraw(*, actor: Actor, fact: Fact) -> None:
    """A remembered memory stops being found as current. Only its author may forget a memory (as
    ``forget``), so it is deleted when the caller remembered it; anyone else's is ended instead:
    it, its passages and the memories stored with it are superseded now, nothing is deleted, and
    "as of" an earlier day still finds it."""
    require_may_write(actor, scope=fact.scope, what=f"Withdrawing mem_{fact.pk}, a shared memory,")
    document = fact.document if fact.source == Fact.Source.REMEMBERED else None
    deleted = document is not None and fact.created_by_id == actor.user.pk
    if document is not None and deleted:
        delete_documents([document])  # its chunks, facts and values go with it
    else:
        now = timezone.now()
        if document is not None:
            Document.objects.filter(pk=document.pk, superseded_at__isnull=True).update(superseded_at=now)
            Chunk.objects.filter(document_id=document.pk, superseded_at__isnull=True).update(superseded_at=now)
            Fact.objects.filter(document_id=document.pk, superseded_at__isnull=True).update(superseded_at=now)
        Fact.objects.filter(pk=fact.pk, superseded_at__isnull=True).update(superseded_at=now)
    record_audit(actor=actor, action="memory.withdrawn", target=format_id("mem", fact.pk), details={"deleted": deleted})


@dataclass(frozen=True)
class Forgotten:
    """A memory forgotten: what it said, and the trash its document waits in."""

    statement: str
    trashed: Trashed | None  # None: a memory left from before documents held memories, deleted for good


@transaction.atomic
def forget(*, actor: Actor, memory_id: int) -> Forgotten:
    """Move a memory the caller stored with remember to the trash, with its document and the
    relations remembered with it; never anything else. It stays restorable there for the
    organisation's period (``memory.documents.trash``).

    A memory the caller cannot see is answered exactly as one that does not exist.
    """
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
    require_may_write(actor, scope=fact.scope, what=f"Forgetting mem_{memory_id}, a shared memory,")
    restricted = fact.category.restricted if fact.category is not None else False
    details: dict[str, object] = {"statement": in_the_trail(fact.statement, scope=fact.scope, restricted=restricted)}
    trashed = None
    if fact.document is not None:
        document = Document.objects.select_for_update(of=("self",)).select_related("org").get(pk=fact.document.pk)
        document.trashed_at = move_to_trash(actor=actor, documents=[document])
        trashed = Trashed(document_id=document.pk, title=document.title, until=purge_after(document))
        details |= {"document": document.public_id, "trash_until": trashed.until.isoformat()}
    else:  # every memory is stored with its document; a row without one is left from before
        fact.delete()
    record_audit(actor=actor, action="memory.forgotten", target=format_id("mem", memory_id), details=details)
    return Forgotten(statement=fact.statement, trashed=trashed)
