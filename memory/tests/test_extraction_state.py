"""Facts are never lost silently: deadlocks and transient errors are retried, failures stay marked
on the document, and the extraction sweep tries them again."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError, connection
from django.test import override_settings

from memory.documents.ingestion import ingest_document
from memory.graph.extracting import extract_facts, sweep_pending_extractions
from memory.models import Document, Fact
from memory.tasks import extract_facts_task
from memory.tests.factories import save

ONE = "Priya Shah met Sam Carter in Leeds on 3 March 2026 about the renewal."
OTHER = "Sam Carter met Priya Shah in Leeds on 4 March 2026 about the budget."


def _backend_waits_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row and row[0] == "Lock")


@pytest.mark.django_db(transaction=True)
def test_two_documents_naming_the_same_people_in_opposite_order_both_keep_their_facts(actor, monkeypatch):
    """Each extraction links its first name, then waits until the other has linked its own first
    name (or is held waiting for a lock): the order in which two workers take the names' locks
    must not make one of them lose its facts."""
    from brain.services import mark_memory_built
    from memory.graph import document_facts

    # The first document of a memory marks it built, updating the organisation's row; that
    # storing step is retried by its task, and kept out of this test of extraction.
    mark_memory_built(org=actor.org)
    one = save(actor, "One", ONE, ingest=False)
    other = save(actor, "Other", OTHER, ingest=False)
    real = document_facts.get_or_create_entity
    pids: dict[int, int] = {}
    linked_first = {one.pk: threading.Event(), other.pk: threading.Event()}
    partner = {one.pk: other.pk, other.pk: one.pk}
    failures: list[BaseException] = []

    def rendezvous(*, document, **kw):
        entity = real(document=document, **kw)
        if not linked_first[document.pk].is_set():
            linked_first[document.pk].set()
            mate = partner[document.pk]
            for _ in range(1200):  # a safety net only: the partner gets here or blocks within moments
                if linked_first[mate].is_set() or (mate in pids and _backend_waits_on_a_lock(pids[mate])):
                    break
                time.sleep(0.05)
        return entity

    monkeypatch.setattr(document_facts, "get_or_create_entity", rendezvous)

    def run(document_id: int) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids[document_id] = cursor.fetchone()[0]
            ingest_document(document_id=document_id)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(pk,)) for pk in (one.pk, other.pk)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for document in (one, other):
        document.refresh_from_db()
        assert document.status == "ready"
        assert Fact.objects.filter(document=document).exists(), document.title
        assert document.extraction == "done"


@pytest.mark.django_db
def test_a_transient_database_error_during_extraction_is_retried_and_the_facts_land(actor, monkeypatch):
    from memory.graph import document_facts

    real, calls = document_facts.record_facts, []

    def deadlocked_once(**kw):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("deadlock detected")
        return real(**kw)

    monkeypatch.setattr(document_facts, "record_facts", deadlocked_once)
    monkeypatch.setattr("memory.graph.extracting.time.sleep", lambda seconds: None)
    document = save(actor, "Meeting", ONE)
    assert len(calls) == 2
    assert Fact.objects.filter(document=document).exists()
    assert document.extraction == "done"
    assert document.extraction_error == ""


@pytest.mark.django_db
def test_a_failed_extraction_leaves_the_document_marked_and_the_sweep_tries_it_again(
    actor, monkeypatch, django_capture_on_commit_callbacks
):
    from memory.graph import document_facts

    def broken(**kw):
        raise RuntimeError("the extractor broke")

    monkeypatch.setattr(document_facts, "record_facts", broken)
    document = save(actor, "Meeting", ONE)
    assert document.status == "ready"  # its passages are searchable
    assert document.extraction == "pending"
    assert "the extractor broke" in document.extraction_error
    assert not Fact.objects.filter(document=document).exists()

    sent: list[tuple[str, list[int]]] = []
    monkeypatch.setattr("brain.queueing.current_app.send_task", lambda name, args, **kw: sent.append((name, args)))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_pending_extractions(grace_seconds=0) == 1
    assert sent == [("memory.tasks.extract_facts_task", [document.pk])]

    monkeypatch.undo()
    assert extract_facts_task(document.pk) == "done"
    assert extract_facts_task(document.pk) == "skipped"  # safe to run twice
    document.refresh_from_db()
    assert document.extraction == "done"
    assert document.extraction_error == ""
    assert Fact.objects.filter(document=document).exists()


@pytest.mark.django_db
@override_settings(BRAIN_INGEST_MAX_ATTEMPTS=3)
def test_an_extraction_that_keeps_failing_ends_failed_with_its_reason(actor, monkeypatch):
    def broken(**kw):
        raise RuntimeError("the extractor broke")

    monkeypatch.setattr("memory.graph.document_facts.record_facts", broken)
    monkeypatch.setattr("brain.queueing.current_app.send_task", lambda name, args, **kw: None)
    document = save(actor, "Meeting", ONE)
    assert extract_facts(document_id=document.pk) == "pending"
    assert extract_facts(document_id=document.pk) == "failed"
    document.refresh_from_db()
    assert document.status == "ready"
    assert document.extraction == "failed"
    assert "stopped after 3 attempts" in document.extraction_error
    assert "the extractor broke" in document.extraction_error
    assert sweep_pending_extractions(grace_seconds=0) == 0  # given up: an admin retries it


@pytest.mark.django_db
def test_a_document_ingested_with_extraction_off_owes_no_facts(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    document = save(actor, "Meeting", ONE)
    assert document.extraction == ""
    assert sweep_pending_extractions(grace_seconds=0) == 0


@pytest.mark.django_db
def test_a_failed_extraction_shows_in_rest_and_the_admin_which_can_retry_it(actor, monkeypatch):
    from rest_framework.test import APIClient

    from brain.tests.admin_client import logged_in, make_org_admin
    from conftest import make_token

    def broken(**kw):
        raise RuntimeError("the extractor broke")

    monkeypatch.setattr("memory.graph.document_facts.record_facts", broken)
    sent: list[object] = []
    monkeypatch.setattr("brain.queueing.current_app.send_task", lambda name, args, **kw: sent.append(args))
    document = save(actor, "Meeting", ONE)
    Document.objects.filter(pk=document.pk).update(extraction="failed", extraction_error="stopped: broke")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(actor.org).plaintext}")
    detail = client.get(f"/api/v1/documents/{document.public_id}").json()
    assert detail["status"] == "ready"
    assert (detail["extraction"], detail["extraction_error"]) == ("failed", "stopped: broke")

    admin = logged_in(make_org_admin(actor.org))
    assert "failed" in admin.get("/admin/memory/document/?extraction=failed").content.decode()
    admin.post("/admin/memory/document/", {"action": "retry_extraction", "_selected_action": [document.pk]})
    document.refresh_from_db()
    assert document.extraction == "pending"
