"""Ingestion under faults: temporary failures retry, dead workers' documents come back, locks stay narrow."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from brain.core.services import mark_memory_built
from memory.documents.ingestion import _claim, ingest_document, release_worker_claims, sweep_stuck_documents, worker_tag
from memory.documents.saving import add_document
from memory.index.embedding import EmbeddingError
from memory.models import Document
from memory.tasks import ingest_document_task
from tests.progress import wait_until

POLICY = "# Refunds\n\nEnterprise customers get a full refund within 30 days."


def endpoint_down(documents, texts):
    raise EmbeddingError("embedding endpoint timed out", transient=True)


@pytest.mark.django_db
def test_a_temporary_embedding_failure_puts_the_document_back_in_the_queue(actor, monkeypatch):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    monkeypatch.setattr("memory.documents.ingestion._embed", endpoint_down)
    assert ingest_document(document_id=saved.document.pk) == "retry"
    document = Document.objects.get(pk=saved.document.pk)
    assert document.status == "queued"
    assert document.claim == ""
    assert "timed out" in document.error
    monkeypatch.undo()
    assert ingest_document(document_id=saved.document.pk) == "ready"
    assert Document.objects.get(pk=saved.document.pk).error == ""


@pytest.mark.django_db
def test_a_deadlock_while_storing_gives_the_lanes_document_back_to_the_queue(actor, monkeypatch):
    """A task sent for one document may ingest another of its lane; when storing that one loses a
    deadlock, it goes back to the queue at once instead of staying claimed until the lease ends."""
    from memory.documents import ingestion

    first = add_document(actor=actor, title="Policy", content=POLICY).document
    second = add_document(actor=actor, title="Travel", content="Book trains for trips under four hours.").document

    def deadlock(*args, **kwargs):
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(ingestion, "confirm", deadlock)
    monkeypatch.setattr(ingestion, "next_document", lambda lane: first.pk)
    assert ingestion.ingest_next(document_id=second.pk, task_id="t-1") == "retry"
    taken = Document.objects.get(pk=first.pk)
    assert (taken.status, taken.claim) == ("queued", "")
    assert "deadlock" in taken.error
    monkeypatch.undo()
    assert ingest_document(document_id=first.pk) == "ready"


@pytest.mark.django_db
def test_the_task_retries_a_temporary_failure_with_backoff(actor, monkeypatch):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    monkeypatch.setattr("memory.documents.ingestion._embed", endpoint_down)
    with pytest.raises(Retry) as retry:
        ingest_document_task.apply(args=[saved.document.pk], throw=True)
    assert retry.value.when == 10
    assert Document.objects.get(pk=saved.document.pk).status == "queued"


@pytest.mark.django_db
def test_temporary_failures_fail_the_document_once_its_attempts_run_out(actor, monkeypatch, settings):
    settings.BRAIN_INGEST_MAX_ATTEMPTS = 3
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    monkeypatch.setattr("memory.documents.ingestion._embed", endpoint_down)
    outcomes = [ingest_document(document_id=saved.document.pk) for _ in range(4)]
    assert outcomes == ["retry", "retry", "failed", "skipped"]
    document = Document.objects.get(pk=saved.document.pk)
    assert document.status == "failed"
    assert document.attempts == 3


@pytest.mark.django_db
def test_a_permanent_embedding_failure_fails_the_document_at_once(actor, monkeypatch):
    def model_missing(documents, texts):
        raise EmbeddingError("endpoint answered 401 unauthorised", transient=False)

    saved = add_document(actor=actor, title="Policy", content=POLICY)
    monkeypatch.setattr("memory.documents.ingestion._embed", model_missing)
    assert ingest_document(document_id=saved.document.pk) == "failed"


@pytest.mark.django_db
def test_a_restarted_worker_takes_back_the_documents_it_held_when_it_died(actor):
    held = add_document(actor=actor, title="Held", content=POLICY).document
    elsewhere = add_document(actor=actor, title="Elsewhere", content=POLICY + " Two.").document
    started = timezone.now()
    before = started - timedelta(seconds=30)
    Document.objects.filter(pk=held.pk).update(
        status="processing", claim=f"t1:aaaa:{worker_tag('brain@host')}", claimed_at=before
    )
    Document.objects.filter(pk=elsewhere.pk).update(
        status="processing", claim=f"t2:bbbb:{worker_tag('other@host')}", claimed_at=before
    )
    assert release_worker_claims(worker="brain@host", started_before=started) == 1
    assert Document.objects.get(pk=held.pk).status == "queued"
    assert Document.objects.get(pk=elsewhere.pk).status == "processing"  # another worker's lease still runs
    assert ingest_document(document_id=held.pk, task_id="t3", worker="brain@host") == "ready"


@pytest.mark.django_db
def test_a_document_whose_worker_keeps_dying_is_failed_by_the_sweep(actor, settings):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    stale = timezone.now() - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS + 5)
    Document.objects.filter(pk=saved.document.pk).update(
        status="processing", claim="dead:1", claimed_at=stale, attempts=settings.BRAIN_INGEST_MAX_ATTEMPTS
    )
    assert sweep_stuck_documents() == 0
    document = Document.objects.get(pk=saved.document.pk)
    assert document.status == "failed"
    assert "attempts" in document.error


@pytest.mark.django_db
def test_the_sweep_grace_is_a_setting(actor, settings):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    settings.BRAIN_QUEUED_GRACE_SECONDS = 3600
    assert sweep_stuck_documents() == 0
    Document.objects.filter(pk=saved.document.pk).update(recorded_at=timezone.now() - timedelta(seconds=3601))
    assert sweep_stuck_documents() == 1


@pytest.mark.django_db(transaction=True)
def test_two_workers_of_one_organisation_do_not_wait_for_each_other(actor):
    """A claim locks its document's row only, not the organisation's."""
    mark_memory_built(org=actor.org)
    theirs = add_document(actor=actor, title="Theirs", content=POLICY).document
    ours = add_document(actor=actor, title="Ours", content=POLICY + " Ours.").document
    locked, release = threading.Event(), threading.Event()

    def another_worker_holds_its_claim() -> None:
        try:
            with transaction.atomic():  # keeps the claim's locks until the end of this block
                assert _claim(theirs.pk, "other-task:x:y") is not None
                locked.set()
                release.wait()
        finally:
            connection.close()

    holder = threading.Thread(target=another_worker_holds_its_claim)
    holder.start()
    try:
        wait_until(locked.is_set, what="the other worker to claim its document")
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        try:
            assert ingest_document(document_id=ours.pk) == "ready"
        except OperationalError as exc:  # the failure this test guards against
            pytest.fail(f"ingestion waited on another worker's lock: {exc}")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")
        release.set()
        holder.join(10)
