"""The trash: a deleted document or a forgotten memory waits here for its organisation's period
(``Organisation.trash_days``, 30 by default) before it is deleted for good.

Moving a document to the trash deletes nothing: the document, its passages and its facts carry
the moment it went in (``trashed_at``), and ``memory.access`` leaves such rows out of every read
(search, the graph, values, registers, jobs). Restoring clears the mark on the same rows, so the
document comes back with its category, scope and owner, its passages and its facts exactly as
they were, with their ids and history. Its other versions go in and come back with it.

Who may restore: the member who put it in the trash, and the organisation's admins, as far as
they may read it (``memory.access.readable_in_trash``); anything else is "not found". The same
people may delete it for good before its day (``delete_for_good``).

The nightly purge (``purge_due_trash``) deletes what has been in the trash longer than its
organisation's period, one document per transaction, each with its audit record. It re-reads
and locks each row and checks again that it is still in the trash and due, so running it twice,
or after a run that stopped midway (a worker killed, the broker gone), deletes each due document
once and never one that is not due or was restored.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, QuerySet, Value
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import NotFound
from brain.infra.ids import format_id
from brain.models import Organisation
from memory.access import in_the_trail, readable_in_trash
from memory.documents.saving import ingest_again
from memory.documents.turns import next_message_id
from memory.models import Chunk, Document, Fact

logger = logging.getLogger(__name__)

PURGE_BATCH = 200  # documents looked at per query of a purge run; each is deleted in its own transaction
LISTED = 200  # rows of the trash page


@dataclass(frozen=True)
class Trashed:
    """What went to the trash: the document (a memory's, for a forgotten memory), and until when."""

    document_id: int
    title: str
    until: datetime

    @property
    def public_id(self) -> str:
        return format_id("doc", self.document_id)


def trash_period(org: Organisation) -> timedelta:
    return timedelta(days=org.trash_days)


def purge_after(document: Document) -> datetime:
    """When a document in the trash is deleted for good."""
    return (document.trashed_at or timezone.now()) + trash_period(document.org)


def versions_of(document: Document) -> list[int]:
    """Every version of the document: those saved under its external id, or itself alone."""
    if not document.external_id:
        return [document.pk]
    same = Document.objects.filter(
        org_id=document.org_id, source_kind=document.source_kind, external_id=document.external_id
    )
    return sorted(same.values_list("pk", flat=True))


def move_to_trash(*, actor: Actor, documents: list[Document]) -> datetime:
    """Put documents (locked by the caller, in its transaction) in the trash with their passages
    and facts; returns the moment. The message after a trashed one was embedded after its text,
    so it is ingested again (``memory.documents.turns`` skips the trash)."""
    now = timezone.now()
    ids = [document.pk for document in documents]
    Document.objects.filter(pk__in=ids, trashed_at__isnull=True).update(trashed_at=now, trashed_by=actor.user)
    Chunk.objects.filter(document_id__in=ids).update(trashed_at=now)
    Fact.objects.filter(document_id__in=ids).update(trashed_at=now)
    after = [next_message_id(document) for document in documents]
    ingest_again([pk for pk in after if pk not in ids])
    return now


@transaction.atomic
def delete_documents(documents: list[Document]) -> None:
    """Delete documents for good with their passages and facts (a purge, or a source that deleted
    them). The message after a deleted one was embedded after its text, so it is ingested again."""
    gone = {document.pk for document in documents}
    after = [next_message_id(document) for document in documents]
    Document.objects.filter(pk__in=gone).delete()
    ingest_again([pk for pk in after if pk not in gone])


def trashed_for(*, actor: Actor) -> QuerySet[Document]:
    """What ``actor`` may see in the trash and restore: what they put there, and for an admin
    everything of the organisation they may read."""
    rows = Document.objects.filter(readable_in_trash(actor))
    return rows if actor.is_admin else rows.filter(trashed_by=actor.user)


def list_trash(*, actor: Actor) -> list[Document]:
    """The trash as ``actor`` sees it, most recently trashed first; one row for a document and
    the versions trashed with it (the newest version stands for them)."""
    rows = trashed_for(actor=actor).select_related("org", "category", "owner", "trashed_by")
    newest: dict[tuple[object, ...], Document] = {}
    for document in rows.order_by("-trashed_at", "-pk")[: LISTED * 4]:
        group = (document.trashed_at, document.source_kind, document.external_id or document.pk)
        newest.setdefault(group, document)
    return list(newest.values())[:LISTED]


@transaction.atomic
def restore_document(*, actor: Actor, document_id: int) -> Trashed:
    """Take a document (and the versions trashed with it) out of the trash, as it was."""
    document = trashed_for(actor=actor).select_for_update(of=("self",)).filter(pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in your trash.")
    until = purge_after(document)
    together = Document.objects.filter(pk__in=versions_of(document), trashed_at=document.trashed_at)
    ids = sorted(together.values_list("pk", flat=True))
    Document.objects.filter(pk__in=ids).update(trashed_at=None, trashed_by=None)
    Chunk.objects.filter(document_id__in=ids).update(trashed_at=None)
    Fact.objects.filter(document_id__in=ids).update(trashed_at=None)
    ingest_again([next_message_id(document)])
    record_audit(
        actor=actor,
        action="document.restored",
        target=document.public_id,
        details={"title": _in_the_trail(document), "versions": [format_id("doc", pk) for pk in ids]},
    )
    return Trashed(document_id=document.pk, title=document.title, until=until)


@transaction.atomic
def delete_for_good(*, actor: Actor, document_id: int) -> Trashed:
    """Delete a document in the trash (and the versions trashed with it) for good, before its day:
    whoever may restore it may do this instead (``trashed_for``). Nothing of it stays."""
    document = trashed_for(actor=actor).select_for_update(of=("self",)).filter(pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in your trash.")
    together = list(Document.objects.filter(pk__in=versions_of(document), trashed_at=document.trashed_at))
    gone = Trashed(document_id=document.pk, title=document.title, until=timezone.now())
    kind = "memory" if document.source_kind == "remember" else "document"
    trashed_at = document.trashed_at.isoformat() if document.trashed_at else None
    details = {"title": _in_the_trail(document), "kind": kind, "trashed_at": trashed_at}
    delete_documents(together)
    record_audit(
        actor=actor,
        action="document.purged",
        target=document.public_id,
        details={**details, "versions": [format_id("doc", d.pk) for d in together], "early": True},
    )
    return gone


def _in_the_trail(document: Document) -> str:
    return in_the_trail(document.title, scope=document.scope, restricted=document.category.restricted)


def due_for_purge(now: datetime) -> QuerySet[Document]:
    """Documents in the trash longer than their organisation's period."""
    period = ExpressionWrapper(Value(timedelta(days=1)) * F("org__trash_days"), output_field=DurationField())
    cutoff = ExpressionWrapper(Value(now) - period, output_field=DateTimeField())
    return Document.objects.filter(trashed_at__isnull=False, trashed_at__lte=cutoff)


def purge_due_trash(*, now: datetime | None = None) -> int:
    """Delete for good what is past its organisation's period; returns how many documents. Each
    organisation where anything went gets one ``trash.purged`` record for the run, with its counts,
    beside the ``document.purged`` record of each document."""
    now = now or timezone.now()
    purged, after = 0, 0
    counts: dict[int, Counter[str]] = {}
    while True:
        batch = list(due_for_purge(now).filter(pk__gt=after).order_by("pk").values_list("pk", flat=True)[:PURGE_BATCH])
        if not batch:
            break
        for pk in batch:
            gone = _purge_one(pk, now)
            if gone is not None:
                counts.setdefault(gone.org_id, Counter())[gone.kind] += 1
                purged += 1
        after = batch[-1]
    for org in Organisation.objects.filter(pk__in=counts).order_by("pk"):
        record_audit(
            actor=None,
            org=org,
            via="nightly",
            who="trash purge",
            action="trash.purged",
            target=f"trash of {org.slug}",
            details={
                "documents": counts[org.pk]["document"],
                "memories": counts[org.pk]["memory"],
                "days": org.trash_days,
            },
        )
    return purged


@dataclass(frozen=True)
class _Purged:
    org_id: int
    kind: str  # "document" or "memory"


def _purge_one(pk: int, now: datetime) -> _Purged | None:
    with transaction.atomic():
        # Locked and checked again: restored or purged since the batch was read means nothing to do.
        due = due_for_purge(now).select_for_update(of=("self",)).select_related("org", "category")
        document = due.filter(pk=pk).first()
        if document is None:
            return None
        kind = "memory" if document.source_kind == "remember" else "document"
        title, trashed_at, by = _in_the_trail(document), document.trashed_at, document.trashed_by_id
        delete_documents([document])
        record_audit(
            actor=None,
            org=document.org,
            via="nightly",
            who="trash purge",
            action="document.purged",
            target=document.public_id,
            details={
                "title": title,
                "trashed_at": trashed_at.isoformat() if trashed_at else None,
                "trashed_by": by,
                "kind": kind,
            },
        )
    logger.info("purged doc_%s from the trash of org %s", pk, document.org_id)
    return _Purged(org_id=document.org_id, kind=kind)
