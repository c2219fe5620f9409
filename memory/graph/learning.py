"""The extraction step of ingestion, and what keeps it from being lost.

A document is ``ready`` (searchable) once its passages are stored; learning its facts comes after,
and its ``extraction`` field says how that went: ``pending`` until it succeeds, ``running`` while a
worker holds it, ``done``, or ``failed`` with the reason once ``BRAIN_INGEST_MAX_ATTEMPTS`` tries
have failed. A deadlock, a serialization conflict or a lost connection is tried again at once, a
few times with a growing pause; whatever still fails leaves the document ``pending`` with its
error, and the extraction sweep (a beat task) tries it again later. A document is never left
ready with its extraction silently skipped.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from brain.infra.queueing import send_on_commit
from memory.documents.failures import is_transient
from memory.graph.document_facts import extract_document
from memory.models import Document

logger = logging.getLogger("brain.extract")
Extraction = Document.Extraction

# Tries of a transient failure within one run, before the document waits for the sweep.
TRIES_NOW = 4
EXTRACT_TASK = "memory.tasks.extract_facts_task"


def _claim(document_id: int) -> bool:
    """Take the document's extraction: pending, or running past the lease (its worker died)."""
    now = timezone.now()
    lease = now - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS)
    takeable = Q(extraction=Extraction.PENDING) | Q(extraction=Extraction.RUNNING, extraction_tried_at__lt=lease)
    return bool(
        Document.objects.filter(takeable, pk=document_id, status=Document.Status.READY).update(
            extraction=Extraction.RUNNING, extraction_tried_at=now, extraction_attempts=F("extraction_attempts") + 1
        )
    )


def extract_ready(document_id: int) -> None:
    """The step ingestion runs once a document's passages are stored (plugged into
    ``memory.documents.ingestion.READY`` when the app is ready)."""
    if settings.BRAIN_EXTRACT_FACTS:
        extract_facts(document_id=document_id)


def extract_facts(*, document_id: int) -> str:
    """Learn the facts of one ready document and record how it went. Safe to run twice; never
    raises, so one document's failure never stops a batch.

    Returns "done", "pending" (failed this time; the sweep tries again), "failed" (given up) or
    "skipped" (nothing owed, or another worker has it). When even recording the failure fails (the
    database is away), the document stays marked pending or running, and the sweep finds it."""
    try:
        return _extract_facts(document_id)
    except Exception:
        logger.exception("extracting facts from document %s failed; the extraction sweep will try again", document_id)
        return "pending"


def _extract_facts(document_id: int) -> str:
    if not _claim(document_id):
        return "skipped"
    for attempt in range(TRIES_NOW):
        try:
            extract_document(document_id=document_id)
        except Exception as exc:
            if not is_transient(exc) or attempt == TRIES_NOW - 1:
                return _failed(document_id, exc)
            logger.warning("extracting facts from document %s failed for now, trying again: %s", document_id, exc)
            _pause(attempt)
            continue
        Document.objects.filter(pk=document_id, extraction=Extraction.RUNNING).update(
            extraction=Extraction.DONE, extraction_error=""
        )
        return "done"
    raise AssertionError("unreachable")  # pragma: no cover


def _pause(attempt: int) -> None:
    """Back off before another try; a connection the failure broke is replaced (outside a
    transaction only: inside one, closing it would end the caller's work)."""
    time.sleep(0.2 * 2**attempt * (1 + random.random()))  # noqa: S311 - jitter, not a secret
    if not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()


def _failed(document_id: int, exc: Exception) -> str:
    reason = f"{type(exc).__name__}: {exc}"[:2000]
    if not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()
    cap = settings.BRAIN_INGEST_MAX_ATTEMPTS
    running = Document.objects.filter(pk=document_id, extraction=Extraction.RUNNING)
    if running.filter(extraction_attempts__lt=cap).update(extraction=Extraction.PENDING, extraction_error=reason):
        logger.warning("extracting facts from document %s failed; it will be tried again: %s", document_id, reason)
        return "pending"
    logger.error("extracting facts from document %s failed %s times; giving up: %s", document_id, cap, reason)
    running.update(extraction=Extraction.FAILED, extraction_error=f"stopped after {cap} attempts; last: {reason}")
    return "failed"


def sweep_pending_extractions(*, grace_seconds: int | None = None) -> int:
    """Queue again the extractions that failed or were lost with their worker; returns how many.

    - pending and not tried within the grace (``BRAIN_QUEUED_GRACE_SECONDS``): it failed, or the
      worker died between storing the passages and extracting;
    - running past the lease: its worker died while extracting. After ``BRAIN_INGEST_MAX_ATTEMPTS``
      tries either way, the extraction is marked failed with the reason instead.
    A version that has been replaced is not extracted any more: its facts would not be current.
    """
    grace = settings.BRAIN_QUEUED_GRACE_SECONDS if grace_seconds is None else grace_seconds
    now = timezone.now()
    quiet_since = now - timedelta(seconds=grace)
    lease = now - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS)
    cap = settings.BRAIN_INGEST_MAX_ATTEMPTS
    ready = Document.objects.filter(status=Document.Status.READY)
    ready.filter(extraction__in=[Extraction.PENDING, Extraction.RUNNING], superseded_at__isnull=False).update(
        extraction=Extraction.NONE
    )
    dead = Q(extraction=Extraction.RUNNING, extraction_tried_at__lt=lease)
    ready.filter(dead, extraction_attempts__gte=cap).update(
        extraction=Extraction.FAILED,
        extraction_error=f"stopped after {cap} attempts that each ended with the worker gone or out of time",
    )
    quiet = Q(extraction=Extraction.PENDING) & (
        Q(extraction_tried_at__lt=quiet_since) | Q(extraction_tried_at__isnull=True, processed_at__lt=quiet_since)
    )
    ids = list(ready.filter(quiet | dead).values_list("pk", flat=True)[:1000])
    with transaction.atomic():
        for document_id in ids:
            _enqueue(document_id)
    return len(ids)


def retry_extraction(*, document_id: int) -> bool:
    """Try a failed extraction again from the start (the admin's action); whether it was queued."""
    with transaction.atomic():
        failed = Document.objects.filter(pk=document_id, status=Document.Status.READY, extraction=Extraction.FAILED)
        if not failed.update(extraction=Extraction.PENDING, extraction_attempts=0, extraction_error=""):
            return False
        _enqueue(document_id)
    return True


def _enqueue(document_id: int) -> None:
    # A broker that is away only delays it: the row stays pending and the next sweep sends it again.
    send_on_commit(EXTRACT_TASK, document_id, what="extraction of document")
