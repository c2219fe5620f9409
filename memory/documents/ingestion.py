"""Ingesting saved documents: claims and leases, chunking, embedding, storing, retries, pausing and sweeps.

The whole way from a saved source to what Brain knows, in the order it runs; each step names the
one function that does it, and no step re-reads what an earlier one kept:

1. save: ``memory.documents.saving.add_document`` stores the ``Document`` in one transaction and
   queues ``ingest_document`` when it commits (through the outbox, so a frozen broker loses nothing);
2. claim: ``_claim`` takes the document with a lease (a dead worker's document is taken back);
3. parse: ``memory.documents.source.read_document`` reads the source once into typed blocks
   (``memory.extraction.read_blocks``: headings, paragraphs, items with their lead-in, table rows
   with their header, quotes, code, mail structure, turns) and cuts passages that follow them
   (``memory.documents.chunking.passages``, or a conversation's turns);
4. embed: ``_embed`` embeds the passages in batches shared between documents;
5. store: ``_store`` replaces the document's passages and blocks (``block_rows.replace_blocks``) in
   one transaction and marks it ready, so it is searchable from here on;
6. learn: the ``READY`` seam calls ``memory.graph.learning.extract_ready``, which queues
   ``extract_facts``; ``memory.graph.document_facts.extract_document`` reads the kept blocks
   (``source.read_text``), runs the extraction layer (``memory.extraction.extract``, refined by a
   model when one is configured), takes values from table records, links names to known entities
   and writes facts, mentions and values with their time rules (``memory.graph.writes``);
7. registers: the nightly scans (``registers.nightly.run_nightly``) read the new passages and
   facts for promises, terms and contradictions.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.services import mark_memory_built
from brain.infra.hooks import Seam
from brain.infra.queueing import send_on_commit
from brain.mcp.meter import can_pay
from brain.models import Organisation
from memory.access import readable
from memory.documents.block_rows import replace_blocks
from memory.documents.chunking import ChunkDraft
from memory.documents.failures import is_transient
from memory.documents.lanes import LANES, SKIPPED, lane_of, next_document, take_turn
from memory.documents.saving import INGEST_TASK, Status, enqueue, ingest_again, logger, must_wait
from memory.documents.source import read_document
from memory.documents.turns import chunk_fields, embedded_texts, next_message_id
from memory.extraction import Block
from memory.index.serving import Models, Vectors, confirm, embed_with, models_of
from memory.models import Chunk, Document, Fact

EMBED_BATCH = 64
Extraction = Document.Extraction

# What runs once a document's passages are stored: learning its facts (memory.graph.learning plugs
# it in). A document is searchable even if a step fails; each step keeps its own state and retries.
READY: Seam[Callable[[int], object]] = Seam(
    "ready document", "called with a document's id once its passages are stored and it is ready"
)


def extraction_due(document: Document) -> dict[str, object]:
    """The fields that mark a document that has just become ready as owing its facts, or not."""
    if not settings.BRAIN_EXTRACT_FACTS or document.source_kind == "remember":
        return {"extraction": Extraction.NONE}  # remembered facts are recorded as stated
    return {"extraction": Extraction.PENDING, "extraction_error": "", "extraction_attempts": 0}


def worker_tag(worker: str) -> str:
    """A short, fixed-length mark of the worker in a claim, so a restarted worker finds its own."""
    return hashlib.sha256(worker.encode()).hexdigest()[:8]


def _claim(document_id: int, claim: str) -> Document | None:
    """Take the document for processing, or None when someone else has it or it is done.

    A claim older than the lease is taken to be lost with its worker. A redelivered task keeps
    its task id, so it may take back its own claim at once.
    """
    lease = timezone.now() - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS)
    task_id = claim.split(":", 1)[0]
    with transaction.atomic():
        document = Document.objects.select_for_update(of=("self",)).select_related("org").filter(pk=document_id).first()
        if document is None:
            return None
        reclaimable = document.status == Status.PROCESSING and (
            (document.claimed_at and document.claimed_at < lease) or document.claim.split(":", 1)[0] == task_id
        )
        if document.status not in (Status.QUEUED, Status.WAITING) and not reclaimable:
            return None
        if must_wait(document.org, document.source_kind):
            document.status = Status.WAITING
            document.save(update_fields=["status"])
            return None
        document.status, document.claim, document.claimed_at = Status.PROCESSING, claim, timezone.now()
        document.attempts = F("attempts") + 1
        document.save(update_fields=["status", "claim", "claimed_at", "attempts"])
        document.refresh_from_db()
        return document


def ingest_document(*, document_id: int, task_id: str | None = None, worker: str = "") -> str:
    """Chunk, embed and store one document. Safe to run twice; returns what happened."""
    return ingest_documents(document_ids=[document_id], task_id=task_id, worker=worker)[document_id]


def ingest_next(*, document_id: int, lane: str = "", task_id: str | None = None, worker: str = "") -> str:
    """What one message of an ingest lane does (memory.documents.lanes.take_turn): its own document
    when only it may take it (its worker died past the lease, this task was delivered again, it was
    waiting), else the lane's next queued document by turns between organisations, whichever
    document it was sent for. ``lane`` is the queue it came from, for a document deleted since."""
    own = Document.objects.filter(pk=document_id).values_list("status", "length").first()
    lane = lane_of(own[1]) if own is not None else lane
    if lane not in LANES:
        return SKIPPED

    def ingest(chosen: int) -> str:
        return ingest_document(document_id=chosen, task_id=task_id, worker=worker)

    return take_turn(
        recover=None if own is None or own[0] == Status.QUEUED else lambda: ingest(document_id),
        pick=lambda: next_document(lane=lane),
        run=ingest,
        pass_on=lambda: send_on_commit(INGEST_TASK, document_id, what="document", queue=lane),
    )


def ingest_documents(*, document_ids: list[int], task_id: str | None = None, worker: str = "") -> dict[int, str]:
    """Ingest several documents with their passages embedded in shared batches (bulk loads).

    Each document is claimed, and its chunks replaced, on its own: one failure fails only its
    document, and a document someone else holds is skipped. A temporary failure (the embedding
    endpoint away) puts the document back in the queue and answers "retry".
    """
    outcome: dict[int, str] = {}
    work: list[tuple[Document, str, list[ChunkDraft]]] = []
    blocks: dict[int, list[Block]] = {}
    for document_id in document_ids:
        claim = f"{task_id or 'direct'}:{uuid.uuid4().hex[:8]}:{worker_tag(worker)}"
        document = _claim(document_id, claim)
        if document is None:
            outcome[document_id] = SKIPPED
            continue
        try:
            reading = read_document(document)
            work.append((document, claim, reading.passages))
            blocks[document.pk] = reading.blocks
        except Exception as exc:
            outcome[document_id] = _fail(document_id, claim, exc)
    texts = {doc.pk: embedded_texts(doc, drafts) for doc, _, drafts in work}
    try:
        vectors = _embed([doc for doc, _, _ in work], texts)
    except Exception as exc:
        for document, claim, _ in work:
            outcome[document.pk] = _fail(document.pk, claim, exc)
        return outcome
    for document, claim, drafts in work:
        try:
            outcome[document.pk] = _store(
                document.pk, claim, drafts, texts[document.pk], vectors[document.pk], blocks[document.pk]
            )
        except Exception as exc:
            # A deadlock's victim (or any failure while storing) gives the document back to the
            # queue or fails it here: left claimed, it would wait out the lease, as the task's retry
            # is for the document it was sent for, which may not be this one (``ingest_next``).
            outcome[document.pk] = _fail(document.pk, claim, exc)
            continue
        if outcome[document.pk] == "ready":
            for step in READY:
                step(document.pk)
    return outcome


def _embed(documents: list[Document], texts: dict[int, list[str]]) -> dict[int, Vectors]:
    """Each document's passage vectors, in shared batches per organisation's models."""
    groups: dict[Models, list[Document]] = {}
    for document in documents:
        groups.setdefault(models_of(document.org), []).append(document)
    out: dict[int, Vectors] = {}
    for models, group in groups.items():
        vectors = embed_with(models, [text for document in group for text in texts[document.pk]], EMBED_BATCH)
        start = 0
        for document in group:
            out[document.pk] = vectors.pick(range(start, start + len(texts[document.pk])))
            start += len(texts[document.pk])
    return out


def _fail(document_id: int, claim: str, exc: Exception) -> str:
    """A temporary failure goes back to the queue while attempts remain; anything else fails."""
    if is_transient(exc):
        reason = f"temporary failure, retrying: {type(exc).__name__}: {exc}"[:2000]
        released = Document.objects.filter(
            pk=document_id, claim=claim, attempts__lt=settings.BRAIN_INGEST_MAX_ATTEMPTS
        ).update(status=Status.QUEUED, error=reason, claim="")
        if released:
            logger.warning("ingesting document %s failed for now; it goes back to the queue: %s", document_id, exc)
            return "retry"
    logger.error("ingesting document %s failed: %s", document_id, exc, exc_info=exc)
    Document.objects.filter(pk=document_id, claim=claim).update(
        status=Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], claim=""
    )
    return "failed"


def _store(
    document_id: int, claim: str, drafts: list[ChunkDraft], texts: list[str], vectors: Vectors, blocks: list[Block]
) -> str:
    with transaction.atomic():
        current = Document.objects.select_for_update(of=("self",)).select_related("org").filter(pk=document_id).first()
        if current is None or current.claim != claim or current.status != Status.PROCESSING:
            return "lost"  # another worker took over after our lease ran out; its result stands
        vectors = confirm(vectors, current.org_id, texts)
        replace_blocks(current.pk, blocks)
        Chunk.objects.filter(document_id=document_id).delete()
        Chunk.objects.bulk_create(
            [
                Chunk(
                    org_id=current.org_id,
                    document_id=current.pk,
                    ordinal=ordinal,
                    title=current.title,
                    heading=draft.heading[:500],
                    text=draft.text,
                    char_start=draft.char_start,
                    char_end=draft.char_end,
                    **vectors.fields(ordinal),
                    category_id=current.category_id,
                    scope=current.scope,
                    owner_id=current.owner_id,
                    recorded_at=current.recorded_at,
                    superseded_at=current.superseded_at,
                    **chunk_fields(current, draft),
                )
                for ordinal, draft in enumerate(drafts)
            ],
            batch_size=500,
        )
        now = timezone.now()
        Document.objects.filter(pk=document_id).update(
            status=Status.READY,
            chunk_count=len(drafts),
            processed_at=now,
            error="",
            claim="",
            **extraction_due(current),
        )
        if current.previous_id:
            _supersede(current.previous_id, by=current.pk, at=now)
            # The message after an edited one was embedded after its earlier text.
            ingest_again([next_message_id(current)])
        if current.org.memory_built_at is None:
            mark_memory_built(org=current.org)
    return "ready"


def _supersede(document_id: int, *, by: int, at: datetime) -> None:
    """A new version replaces the old one whole: its passages and what Brain learned from it
    (facts, and the values they carry) stop being current at the same moment; nothing is deleted,
    so "as of" an earlier day still sees them. The new version's own facts come from its extraction."""
    Document.objects.filter(pk=document_id, superseded_at__isnull=True).update(superseded_at=at, superseded_by_id=by)
    Chunk.objects.filter(document_id=document_id, superseded_at__isnull=True).update(superseded_at=at)
    Fact.objects.filter(document_id=document_id, superseded_at__isnull=True).update(superseded_at=at)


def retry_document(*, actor: Actor, document_id: int) -> Document:
    """Queue a failed document again. A member reaches only documents they may read; an admin
    (the ingestion queue in the admin, ``manage.py ingestion retry-failed``) any of the organisation's."""
    documents = Document.objects.filter(org=actor.org)
    if not actor.is_admin:
        documents = documents.filter(readable(actor))
    document = documents.filter(pk=document_id).first()
    if document is None:
        raise NotFound("No such document.")
    if document.status != Status.FAILED:
        raise InvalidArgument(f"Only failed documents can be retried; this one is {document.status}.")
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).update(status=Status.QUEUED, error="", claim="", attempts=0)
        enqueue(document.pk, length=document.length)
    document.refresh_from_db()
    return document


def pause_ingestion(*, actor: Actor | User | None, org: Organisation) -> None:
    """New documents wait until ingestion resumes. ``actor`` as for ``record_audit``."""
    with transaction.atomic():
        paused = Organisation.objects.filter(pk=org.pk, ingestion_paused_at__isnull=True).update(
            ingestion_paused_at=timezone.now()
        )
        if paused:
            record_audit(actor=actor, org=org, action="ingestion.paused", target=org.slug)
    org.refresh_from_db()


def resume_ingestion(*, actor: Actor | User | None, org: Organisation) -> int:
    """Unpause and queue every waiting document; returns how many were queued."""
    with transaction.atomic():
        resumed = Organisation.objects.filter(pk=org.pk, ingestion_paused_at__isnull=False).update(
            ingestion_paused_at=None
        )
        org.refresh_from_db()
        queued = queue_waiting_documents(org=org)
        if resumed:
            record_audit(actor=actor, org=org, action="ingestion.resumed", target=org.slug, details={"queued": queued})
    return queued


def queue_waiting_documents(*, org: Organisation) -> int:
    """Queue the documents that wait, unless ingestion is paused; returns how many.

    Those that still cannot be paid for go back to waiting when a worker takes them."""
    with transaction.atomic():
        if Organisation.objects.filter(pk=org.pk, ingestion_paused_at__isnull=False).exists():
            return 0
        waiting = dict(Document.objects.filter(org=org, status=Status.WAITING).values_list("pk", "length"))
        Document.objects.filter(pk__in=waiting, status=Status.WAITING).update(status=Status.QUEUED)
        for document_id, length in waiting.items():
            enqueue(document_id, length=length)
    return len(waiting)


def sweep_stuck_documents(*, queued_grace_seconds: int | None = None) -> int:
    """Re-queue what a crash or a lost message left behind; returns how many were queued.

    - processing past the lease: its worker died (its time limits end it before the lease does);
      after ``BRAIN_INGEST_MAX_ATTEMPTS`` such deaths the document is marked failed instead;
    - queued, and neither saved nor tried within the grace: the message never reached the
      broker, or the broker lost it;
    - waiting while the organisation is no longer paused and its usage allows again (a new
      month's allowance, or credits added some other way than ``add_credits``).
    """
    grace = settings.BRAIN_QUEUED_GRACE_SECONDS if queued_grace_seconds is None else queued_grace_seconds
    now = timezone.now()
    lease = now - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS)
    stale = Q(status=Status.PROCESSING, claimed_at__lt=lease)
    Document.objects.filter(stale, attempts__gte=settings.BRAIN_INGEST_MAX_ATTEMPTS).update(
        status=Status.FAILED,
        claim="",
        error=f"stopped after {settings.BRAIN_INGEST_MAX_ATTEMPTS} attempts that each ended with the worker gone "
        "or out of time",
    )
    quiet_since = now - timedelta(seconds=grace)  # saved, and last tried, before this
    lost = Q(status=Status.QUEUED, recorded_at__lt=quiet_since)
    lost &= Q(claimed_at__isnull=True) | Q(claimed_at__lt=quiet_since)
    unpaused = Q(status=Status.WAITING, org__ingestion_paused_at__isnull=True)
    unpaused &= Q(org__in=[org for org in _orgs_waiting() if can_pay(org)])
    ids = dict(Document.objects.filter(stale | lost | unpaused).values_list("pk", "length")[:1000])
    with transaction.atomic():
        Document.objects.filter(pk__in=ids, status=Status.WAITING).update(status=Status.QUEUED)
        for document_id, length in ids.items():
            enqueue(document_id, length=length)
    return len(ids)


def _orgs_waiting() -> list[Organisation]:
    ids = Document.objects.filter(status=Status.WAITING, org__ingestion_paused_at__isnull=True).values("org_id")
    return list(Organisation.objects.filter(pk__in=ids.distinct()))


def release_worker_claims(*, worker: str, started_before: datetime) -> int:
    """A worker that starts again takes back what it held when it died: those documents go back
    to the queue at once instead of waiting for their lease. Returns how many."""
    with transaction.atomic():
        ids = dict(
            Document.objects.filter(
                status=Status.PROCESSING, claim__endswith=f":{worker_tag(worker)}", claimed_at__lt=started_before
            ).values_list("pk", "length")
        )
        Document.objects.filter(pk__in=ids, status=Status.PROCESSING).update(status=Status.QUEUED, claim="")
        for document_id, length in ids.items():
            enqueue(document_id, length=length)
    return len(ids)
