from datetime import timedelta

import pytest
from django.utils import timezone

from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.models import Organisation
from conftest import make_actor, make_user
from memory.documents.ingestion import (
    ingest_document,
    ingest_documents,
    pause_ingestion,
    resume_ingestion,
    retry_document,
    sweep_stuck_documents,
)
from memory.documents.saving import add_document
from memory.models import Chunk, Document, Fact
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

POLICY = "# Refunds\n\nEnterprise customers get a full refund within 30 days.\n\n## Exceptions\n\nTraining is final."


def test_a_saved_document_is_queued_then_ingested_into_chunks(actor):
    saved = add_document(actor=actor, title="Refund policy", content=POLICY, content_type="text/markdown")
    assert saved.created
    assert saved.document.status == "queued"
    assert ingest_document(document_id=saved.document.pk) == "ready"
    document = Document.objects.get(pk=saved.document.pk)
    assert document.status == "ready"
    assert document.chunk_count == 2
    assert document.attempts == 1
    assert list(Chunk.objects.filter(document=document).values_list("heading", flat=True).order_by("ordinal")) == [
        "Refunds",
        "Refunds > Exceptions",
    ]


def test_ingesting_twice_changes_nothing(actor):
    document = save(actor, "Refund policy", POLICY, content_type="text/markdown")
    before = list(Chunk.objects.filter(document=document).values_list("pk", "text"))
    assert ingest_document(document_id=document.pk) == "skipped"
    assert list(Chunk.objects.filter(document=document).values_list("pk", "text")) == before


def test_the_same_external_id_and_content_is_a_no_op(actor):
    first = save(actor, "Policy", POLICY, external_id="policy-1")
    again = add_document(actor=actor, title="Policy", content=POLICY, external_id="policy-1")
    assert not again.created
    assert again.document.pk == first.pk
    assert Document.objects.filter(org=actor.org).count() == 1


def test_changed_content_becomes_a_version_that_supersedes_the_old_one_when_ready(actor):
    first = save(actor, "Policy", POLICY, external_id="policy-1")
    second = add_document(actor=actor, title="Policy", content=POLICY + "\n\nUpdated.", external_id="policy-1")
    first.refresh_from_db()
    assert second.created
    assert second.document.version == 2
    assert first.superseded_at is None
    ingest_documents(document_ids=[second.document.pk])
    first.refresh_from_db()
    assert first.superseded_by_id == second.document.pk
    assert first.superseded_at is not None
    assert not Chunk.objects.filter(document=first, superseded_at__isnull=True).exists()
    assert Document.objects.filter(org=actor.org).count() == 2  # nothing deleted


def test_what_an_old_version_said_stops_being_current_when_the_new_version_is_ready(actor):
    from datetime import date

    from memory.graph.reads import search_facts

    save(
        actor,
        "Support lead",
        "The Zephyr launch is on 12 March 2027. Acme opened an office in Lisbon.",
        external_id="support",
    )
    yesterday = date.today() - timedelta(days=1)
    first_facts = set(Fact.objects.filter(document__version=1).values_list("statement", flat=True))
    assert first_facts
    Fact.objects.filter(document__version=1).update(recorded_at=timezone.now() - timedelta(days=2))
    second = add_document(
        actor=actor, title="Support lead", content="The Zephyr launch is on 2 April 2027.", external_id="support"
    )
    ingest_document(document_id=second.document.pk)

    now = {f.fact.statement for f in search_facts(actor=actor, query="Zephyr launch Acme office Lisbon", limit=10)}
    then = {
        f.fact.statement
        for f in search_facts(actor=actor, query="Zephyr launch Acme office Lisbon", limit=10, as_of=yesterday)
    }
    assert any("2 April" in statement for statement in now)
    assert not now & first_facts
    assert first_facts <= then
    assert Fact.objects.filter(document__version=1).exists()  # nothing deleted


def test_read_only_actors_cannot_save(org):
    from conftest import make_actor

    with pytest.raises(PermissionDenied):
        add_document(actor=make_actor(org, scopes="read"), title="t", content="c")


def test_unknown_categories_are_refused(actor):
    with pytest.raises(InvalidArgument, match="Unknown category"):
        add_document(actor=actor, title="t", content="c", category="secret-plans")


def test_a_failure_keeps_the_content_records_the_reason_and_can_be_retried(actor, monkeypatch):
    saved = add_document(actor=actor, title="Policy", content=POLICY)

    def broken(documents, texts):
        raise RuntimeError("model file missing")

    monkeypatch.setattr("memory.documents.ingestion._embed", broken)
    assert ingest_document(document_id=saved.document.pk) == "failed"
    document = Document.objects.get(pk=saved.document.pk)
    assert document.status == "failed"
    assert "model file missing" in document.error
    assert document.content == POLICY
    monkeypatch.undo()
    retry_document(actor=actor, document_id=document.pk)
    assert ingest_document(document_id=document.pk) == "ready"
    with pytest.raises(InvalidArgument, match="Only failed"):
        retry_document(actor=actor, document_id=document.pk)


def test_retry_does_not_reach_another_organisation(actor, other_org_actor):
    saved = add_document(actor=other_org_actor, title="Theirs", content="x")
    with pytest.raises(NotFound):
        retry_document(actor=actor, document_id=saved.document.pk)


def test_a_member_retries_only_documents_they_may_read_and_an_admin_any_of_the_organisation(actor):
    colleague = make_actor(actor.org)
    theirs = add_document(actor=colleague, title="Theirs", content="x", scope="personal").document
    Document.objects.filter(pk=theirs.pk).update(status="failed", error="boom")
    with pytest.raises(NotFound):
        retry_document(actor=actor, document_id=theirs.pk)
    assert Document.objects.get(pk=theirs.pk).status == "failed"
    admin = make_actor(actor.org, make_user(actor.org, role="admin"))
    assert retry_document(actor=admin, document_id=theirs.pk).status == "queued"


def test_documents_wait_while_ingestion_is_paused_and_resume_by_themselves(actor):
    pause_ingestion(actor=actor, org=actor.org)
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    assert saved.document.status == "waiting"
    queued_earlier = add_document(actor=actor, title="Queued before", content="x " * 10, source_kind="x")
    Document.objects.filter(pk=queued_earlier.document.pk).update(status="queued")
    assert ingest_document(document_id=queued_earlier.document.pk) == "skipped"  # a worker that finds it paused
    assert Document.objects.get(pk=queued_earlier.document.pk).status == "waiting"
    actor.org.refresh_from_db()
    assert resume_ingestion(actor=actor, org=actor.org) == 2
    assert ingest_document(document_id=saved.document.pk) == "ready"


def test_the_sweep_requeues_documents_whose_worker_died(actor, settings):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    stale = timezone.now() - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS + 5)
    Document.objects.filter(pk=saved.document.pk).update(status="processing", claim="dead:1", claimed_at=stale)
    assert sweep_stuck_documents() == 1
    assert ingest_document(document_id=saved.document.pk) == "ready"


def test_a_live_claim_is_not_taken_but_a_redelivered_task_takes_back_its_own(actor):
    saved = add_document(actor=actor, title="Policy", content=POLICY)
    Document.objects.filter(pk=saved.document.pk).update(
        status="processing", claim="task-a:x", claimed_at=timezone.now()
    )
    assert ingest_document(document_id=saved.document.pk, task_id="task-b") == "skipped"
    assert ingest_document(document_id=saved.document.pk, task_id="task-a") == "ready"
    document = Document.objects.get(pk=saved.document.pk)
    assert Chunk.objects.filter(document=document).count() == document.chunk_count == 1


def test_the_first_ready_document_marks_the_memory_built(actor):
    assert actor.org.memory_built_at is None
    save(actor, "Policy", POLICY)
    assert Organisation.objects.get(pk=actor.org.pk).memory_built_at is not None


def test_a_personal_only_actor_never_stores_shared_knowledge(org):
    from conftest import make_actor
    from memory.graph.memories import remember

    personal = make_actor(org, scopes="read,write,personal")
    with pytest.raises(PermissionDenied, match="only store personal"):
        add_document(actor=personal, title="t", content="c")
    with pytest.raises(PermissionDenied, match="only store personal"):
        remember(actor=personal, content="The office moves in May.", scope="shared")
    fact = remember(actor=personal, content="I take Fridays off.", scope="personal")
    assert fact.scope == "personal"
    assert fact.owner_id == personal.user.pk
    unscoped = remember(actor=personal, content="I start at nine.")  # no scope: personal, not refused
    assert unscoped.scope == "personal"
    assert unscoped.owner_id == personal.user.pk


def test_a_broker_outage_at_commit_loses_nothing(actor, monkeypatch, django_capture_on_commit_callbacks):
    def down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr("memory.tasks.ingest_document_task.delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        saved = add_document(actor=actor, title="Policy", content=POLICY)
    assert Document.objects.get(pk=saved.document.pk).status == "queued"  # the sweep will send it
