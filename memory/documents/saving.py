"""Saving documents: versions under an external id, categories, and queueing for ingestion."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, PermissionDenied
from brain.core.personal import require_may_write
from brain.infra.queueing import send_on_commit
from brain.mcp.meter import can_pay
from brain.models import Category, Organisation
from memory.access import current, readable, readable_category_ids, readable_in_trash, same_audience
from memory.documents.lanes import lane_of
from memory.documents.records import checked_metadata
from memory.documents.stewardship import initial_review
from memory.limits import MAX_DOCUMENT_CHARS, field_problem, metadata_problem, too_long
from memory.models import Document, Scope

logger = logging.getLogger("brain.ingest")
Status = Document.Status

INGEST_TASK = "memory.tasks.ingest_document_task"


def content_hash(title: str, content: str) -> str:
    return hashlib.sha256(f"{title}\n\0{content}".encode()).hexdigest()


def resolve_category(*, actor: Actor, slug: str | None) -> Category:
    category = Category.objects.filter(org=actor.org, slug=slug or Category.DEFAULT_SLUG).first()
    if category is None or category.pk not in readable_category_ids(actor=actor):
        raise InvalidArgument(f"Unknown category {slug!r}; use one of this organisation's categories.")
    return category


def _one_line(label: str) -> str:
    """A name or label as one line: a speaker is written in front of each turn's embedded text, where
    a line break inside it would read as a line of the message."""
    return " ".join(label.split())


@dataclass(frozen=True)
class Saved:
    document: Document
    created: bool  # False when the same content was already saved (under this external_id, or as a twin)
    # True when no external_id was given and the same title and content, said by the same speaker at the
    # same moment, was already saved with the same audience: ``document`` is that earlier one.
    duplicate: bool = False
    # True when the current version under this external id is in the trash: nothing was saved, and
    # ``document`` is that version (``_trashed_version``).
    in_trash: bool = False

    @property
    def duplicate_of(self) -> str | None:
        return self.document.public_id if self.duplicate else None


@transaction.atomic
def add_document(
    *,
    actor: Actor,
    title: str,
    content: str,
    content_type: str = "text/plain",
    source_kind: str = "api",
    source_url: str = "",
    external_id: str = "",
    metadata: dict[str, Any] | None = None,
    category: str | None = None,
    scope: str = Scope.SHARED,
    occurred_at: datetime | None = None,
    speaker: str = "",
    conversation: str = "",
    session: str = "",
    steward: User | None = None,
    review_every_days: int | None = None,
) -> Saved:
    """Save a document and queue its ingestion once the transaction commits.

    With an ``external_id``, sending the same content again changes nothing, and changed
    content becomes a new version that supersedes the old one when it is ready. Without one, the
    same title and content saved again (same speaker, moment and conversation, same readers) is
    the document already there, returned as a duplicate (``_saved_twin``). A document that
    is one message of a conversation names its ``speaker``, ``conversation`` and ``session``
    (and its time as ``occurred_at``): its passage is found by who said it and when, and is
    embedded with the message before it. Its ``steward`` and ``review_every_days`` (who keeps it
    correct, how often) default to its previous version's, else its category's
    (``memory.documents.stewardship.initial_review``).
    """
    if not actor.can_write:
        raise PermissionDenied("Saving knowledge needs a token with the write scope.")
    if scope not in Scope.values:
        raise InvalidArgument("scope must be 'shared' or 'personal'.")
    require_may_write(actor, scope=scope, what="A shared document")
    if not title.strip() or not content.strip():
        raise InvalidArgument("Both title and content need some text.")
    if len(content) > MAX_DOCUMENT_CHARS:
        raise InvalidArgument(too_long("The content", len(content)))
    metadata = checked_metadata(source_kind=source_kind, metadata=metadata)
    if problem := metadata_problem(metadata):
        raise InvalidArgument(problem + ".")
    fields = {"title": title, "source_url": source_url, "external_id": external_id, "speaker": speaker,
              "conversation": conversation, "session": session}  # fmt: skip
    if problem := next(filter(None, (field_problem(name, value) for name, value in fields.items())), None):
        raise InvalidArgument(problem)
    digest = content_hash(title, content)
    chosen = resolve_category(actor=actor, slug=category) if category else None
    previous = None
    if external_id:
        # One writer at a time per external id, so two equal sends never make two versions.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{actor.org.pk}:{source_kind}:{external_id}"]
            )
        previous = _continued_version(
            actor=actor, source_kind=source_kind, external_id=external_id, scope=scope, category=chosen
        )
        if previous is not None and previous.content_hash == digest:
            return Saved(previous, created=False)
        if previous is None and (trashed := _trashed_version(actor, source_kind, external_id, scope, chosen)):
            return Saved(trashed, created=False, in_trash=True)
    elif source_kind not in UNMERGED_KINDS:
        chosen = chosen or resolve_category(actor=actor, slug=None)
        with connection.cursor() as cursor:
            # Two equal saves at once must not both miss each other and make twins.
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{actor.org.pk}:same:{digest}"])
        twin = _saved_twin(
            actor=actor,
            digest=digest,
            scope=scope,
            category=chosen,
            occurred_at=occurred_at,
            speaker=_one_line(speaker)[:200],
            conversation=_one_line(conversation)[:240],
            session=_one_line(session)[:240],
        )
        if twin is not None:
            return Saved(twin, created=False, duplicate=True)
    placed = chosen or (previous.category if previous else resolve_category(actor=actor, slug=None))
    review = initial_review(
        org=actor.org,
        category=placed,
        scope=scope,
        owner_id=actor.user.pk,
        previous=previous,
        steward=steward,
        every_days=review_every_days,
    )
    document = Document.objects.create(
        org=actor.org,
        title=title,
        content=content,
        content_type=content_type,
        source_kind=source_kind,
        source_url=source_url,
        external_id=external_id,
        metadata=metadata or {},
        category=placed,
        scope=scope,
        owner=actor.user,
        status=Status.WAITING if must_wait(actor.org, source_kind) else Status.QUEUED,
        content_hash=digest,
        version=previous.version + 1 if previous else 1,
        previous=previous,
        occurred_at=occurred_at,
        speaker=_one_line(speaker)[:200],
        conversation=_one_line(conversation)[:240],
        session=_one_line(session)[:240],
        length=len(content),
        steward=review.steward,
        review_every_days=review.every_days,
        review_due_on=review.due_on,
    )
    if previous is not None:
        record_audit(
            actor=actor,
            action="document.version_added",
            target=previous.public_id,
            details={"by": document.public_id, "version": document.version},
        )
    if document.status == Status.QUEUED:
        enqueue(document.pk, length=document.length)
    return Saved(document, created=True)


def _continued_version(
    *, actor: Actor, source_kind: str, external_id: str, scope: str, category: Category | None
) -> Document | None:
    """The current document a save with this external id continues as its next version, if any.

    Only a document the writer may read and that has the same audience: the same scope, the
    same owner when personal, and the same category (the earlier one's when none is given). A
    document under the same id that the writer cannot see, or that others see differently, is
    left alone, and the new one starts at version 1 as if the id were fresh.
    """
    candidates = (
        Document.objects.filter(readable(actor), source_kind=source_kind, external_id=external_id)
        .filter(same_audience(scope, actor.user.pk, category.pk if category is not None else None))
        .filter(current())
        .exclude(status=Status.FAILED)
    )
    return candidates.select_related("category").order_by("-version", "-pk").first()


def _trashed_version(
    actor: Actor, source_kind: str, external_id: str, scope: str, category: Category | None
) -> Document | None:
    """The version under this external id that sits in the trash, for the same audience, if any.

    A save under the id of a document someone put in the trash neither brings it back nor makes a
    second copy beside it (a connector syncing an edited item, a script sending it again): the
    trash is a decision people made. Restored, the document takes the next save as a new version;
    deleted for good, the id is free again."""
    candidates = (
        Document.objects.filter(readable_in_trash(actor), source_kind=source_kind, external_id=external_id)
        .filter(same_audience(scope, actor.user.pk, category.pk if category is not None else None))
        .filter(current())
    )
    return candidates.order_by("-version", "-pk").first()


# A memory stored with ``remember`` owns its document (forgetting it deletes the document), so it is
# never the twin of another save, and saving it again is a new memory.
UNMERGED_KINDS = ("remember",)


def _saved_twin(
    *,
    actor: Actor,
    digest: str,
    scope: str,
    category: Category,
    occurred_at: datetime | None,
    speaker: str,
    conversation: str,
    session: str,
) -> Document | None:
    """The current document this save without an external id would repeat, if any: the same title and
    content, said by the same speaker at the same moment in the same conversation, seen by the same
    readers (same scope and category; when personal, the writer's own). Only a document the writer
    may read is found, so the answer never reveals one they cannot see; any other is left alone and
    the save makes its own document."""
    candidates = (
        Document.objects.filter(readable(actor), same_audience(scope, actor.user.pk, category.pk), content_hash=digest)
        .filter(current(), occurred_at=occurred_at, speaker=speaker)
        .filter(conversation=conversation, session=session)
        .exclude(status=Status.FAILED)
        .exclude(source_kind__in=UNMERGED_KINDS)
    )
    return candidates.select_related("category").order_by("pk").first()


def enqueue(document_id: int, *, length: int) -> None:
    """Queue the document's ingestion in its lane (memory.documents.lanes), by its length."""
    send_on_commit(INGEST_TASK, document_id, what="document", queue=lane_of(length))


def ingest_again(document_ids: list[int | None]) -> None:
    """Queue ready documents for ingestion again (their passages stay searchable until the new
    ones replace them); used when what a passage was embedded with has changed."""
    ready = Document.objects.filter(pk__in=[pk for pk in document_ids if pk], status=Status.READY)
    for pk, length in list(ready.values_list("pk", "length")):
        if Document.objects.filter(pk=pk, status=Status.READY).update(status=Status.QUEUED):
            enqueue(pk, length=length)


PAUSED, OUT_OF_USAGE = "paused", "out_of_usage"


def why_waiting(org: Organisation) -> str:
    """Why the organisation's documents wait now: ``PAUSED`` (its ingestion is paused),
    ``OUT_OF_USAGE`` (its usage has run out, brain.mcp.prices), or "" when nothing holds them."""
    if org.ingestion_paused_at:
        return PAUSED
    return "" if can_pay(org) else OUT_OF_USAGE


def must_wait(org: Organisation, source_kind: str) -> bool:
    """Whether a document waits instead of being ingested (``why_waiting``). What ``remember``
    stores was paid by the call, so only a pause holds it."""
    reason = why_waiting(org)
    return reason == PAUSED or (reason == OUT_OF_USAGE and source_kind != "remember")
