"""End to end with a real Celery worker on Redis: ingestion over MCP, and a worker killed mid-document."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import psutil
import pytest
import redis
from django.conf import settings
from django.utils import timezone

from conftest import make_actor, make_org, make_token
from memory.documents.chunking import chunk
from memory.documents.saving import add_document
from memory.models import Chunk, Document
from tests.conftest import call
from tests.progress import documents_progress, wait_while_progressing
from tests.worker_process import kill_worker, start_worker, stop_worker

pytestmark = pytest.mark.django_db(transaction=True)


def handbook(paragraphs: int) -> str:
    """A document long enough that a worker is still storing it when the test kills that worker."""
    return "\n\n".join(
        f"Paragraph {i}: " + "the quarterly plan covers hiring and budgets. " * 18 for i in range(paragraphs)
    )


@pytest.fixture
def worker(tmp_path):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no stale messages from earlier tests
    proc = start_worker(tmp_path)
    yield proc
    stop_worker(proc)


def wait_for(predicate, org, what="the worker"):
    """Wait as long as the worker moves the organisation's documents (tests.progress)."""
    wait_while_progressing(predicate, documents_progress(Document.objects.filter(org=org)), what=what)
    return True


def test_knowledge_sent_over_mcp_is_ingested_by_the_worker_and_found(brain_url, worker):
    org = make_org()
    token = make_token(org).plaintext
    call(brain_url, token, "add_company_knowledge", {"title": "Travel policy", "content": "Book trains under 4 hours."})
    assert wait_for(lambda: Document.objects.filter(org=org, status="ready").exists(), org)
    hits = call(brain_url, token, "search_company_memory", {"query": "should I take the train?"}).structured_content
    assert hits["hits"][0]["title"] == "Travel policy"


def test_messages_sent_over_mcp_keep_who_said_them_and_when_through_the_worker(brain_url, worker):
    # A chat logged out of order over MCP: the worker embeds each message after the one before it
    # in time, and search answers with the speaker and the time.
    org = make_org()
    token = make_token(org).plaintext
    for n, (speaker, moment, text) in enumerate(
        [
            ("Tom", "2026-05-12T09:30:00Z", "When does the BigCo pilot start?"),
            ("Priya", "2026-05-12T09:31:00Z", "On the first of June."),
            ("Tom", "2026-05-12T09:20:00Z", "Morning all."),
        ]
    ):
        args = {"title": f"#sales {n}", "content": text, "speaker": speaker, "occurred_at": moment,
                "conversation": "#sales"}  # fmt: skip
        assert not call(brain_url, token, "add_company_knowledge", args).is_error
    assert wait_for(lambda: Document.objects.filter(org=org, status="ready").count() == 3, org)
    found = call(
        brain_url, token, "search_company_memory", {"query": "What did Priya say about the BigCo pilot start?"}
    )
    first = found.structured_content["hits"][0]
    assert (first["snippet"], first["speaker"], first["said_at"][:16]) == (
        "On the first of June.",
        "Priya",
        "2026-05-12T09:31",
    )


def test_someone_new_in_a_chat_is_named_by_questions_from_their_first_message(brain_url, worker):
    # The web process keeps the speakers it knows per audience; the worker, another process, writes
    # the first message of someone new, and the next search already searches that person's turns.
    org = make_org()
    token = make_token(org).plaintext

    def say(n: int, speaker: str, text: str) -> None:
        args = {"title": f"#ops {n}", "content": text, "speaker": speaker, "occurred_at": f"2026-05-1{n}T09:00:00Z",
                "conversation": "#ops"}  # fmt: skip
        assert not call(brain_url, token, "add_company_knowledge", args).is_error
        assert wait_for(lambda: Document.objects.filter(org=org, status="ready").count() == n, org)

    question = {"query": "What did Zoe say about the pilot?", "include_diagnostics": True}
    say(1, "Tom", "The pilot dashboard is green again.")
    before = call(brain_url, token, "search_company_memory", question).structured_content["hits"]
    assert all("speaker" not in hit["diagnostics"]["ranks"] for hit in before)  # no Zoe yet; Tom is cached
    say(2, "Zoe", "I moved the pilot review to July.")
    first = call(brain_url, token, "search_company_memory", question).structured_content["hits"][0]
    assert first["speaker"] == "Zoe"
    assert "speaker" in first["diagnostics"]["ranks"]


def test_a_worker_killed_mid_document_still_leaves_it_ready_exactly_once(worker):
    org = make_org()
    actor = make_actor(org)
    content = handbook(300)
    document = add_document(actor=actor, title="Handbook", content=content).document
    assert wait_for(lambda: Document.objects.get(pk=document.pk).status == "processing", org)
    children = psutil.Process(worker.pid).children()
    assert children
    for child in children:
        os.kill(child.pid, signal.SIGKILL)  # the pool process dies mid-document, like an OOM kill
    assert wait_for(lambda: Document.objects.get(pk=document.pk).status == "ready", org)
    document.refresh_from_db()
    ordinals = list(Chunk.objects.filter(document=document).values_list("ordinal", flat=True))
    assert document.attempts == 2
    assert len(ordinals) == len(set(ordinals)) == document.chunk_count == len(chunk(content))


def test_a_worker_killed_outright_mid_document_leaves_it_to_another_worker_once_its_lease_has_passed(tmp_path):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    org = make_org()
    content = handbook(150)
    first = start_worker(tmp_path, log_name="first.log", name="first")
    try:
        document = add_document(actor=make_actor(org), title="Handbook", content=content).document
        wait_for(lambda: Document.objects.get(pk=document.pk).status == "processing", org)
    finally:
        kill_worker(first)  # SIGKILL to the whole worker: nothing of it releases the claim
    held = Document.objects.get(pk=document.pk)
    assert held.claimed_at is not None
    assert (held.status, held.attempts, held.chunk_count) == ("processing", 1, 0)  # kept, claimed by the dead
    # The lease runs for minutes; the claim is made as old as a lease instead of waiting one out.
    Document.objects.filter(pk=document.pk).update(
        claimed_at=held.claimed_at - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS + 1)
    )
    second = start_worker(tmp_path, log_name="second.log", name="second")  # it sweeps as it connects
    try:
        wait_for(lambda: Document.objects.get(pk=document.pk).status == "ready", org)
    finally:
        stop_worker(second)
    document.refresh_from_db()
    ordinals = list(Chunk.objects.filter(document=document).values_list("ordinal", flat=True))
    assert document.attempts == 2
    assert len(ordinals) == len(set(ordinals)) == document.chunk_count == len(chunk(content))


def test_knowledge_saved_out_of_credits_waits_then_the_worker_ingests_it_once_credits_arrive(brain_url, worker):
    from django.core.management import call_command

    from usage.metering import month_of
    from usage.models import Account, Month

    org = make_org()
    token = make_token(org).plaintext
    Month.objects.create(org=org, month=month_of(org), free_used=1000)  # this month's free reads are spent
    Account.objects.filter(org=org).update(credits=0)  # and there are no credits

    saved = call(brain_url, token, "add_company_knowledge", {"title": "Parking", "content": "Level -2 is ours."})

    assert "waiting" in saved.structured_content["detail"]
    time.sleep(3)  # the worker is running: nothing may ingest it before credits arrive
    assert Document.objects.get(org=org).status == "waiting"
    call_command("credits", "--org", org.slug, "add", "5")
    assert wait_for(lambda: Document.objects.get(org=org).status == "ready", org)
    assert Account.objects.get(org=org).credits == 5  # ingestion itself costs nothing
    hits = call(brain_url, token, "search_company_memory", {"query": "where do we park?"}).structured_content
    assert hits["hits"][0]["title"] == "Parking"
    assert Account.objects.get(org=org).credits == 4


NOTES_READY_WITHIN = 30  # seconds from a note's save; a note left without a message waited 300+ s for the sweep
BIG = "\n\n".join(f"Paragraph {i}: " + "the quarterly plan covers hiring and budgets. " * 18 for i in range(150))


@pytest.fixture
def two_slot_worker(tmp_path):
    """A worker with two processes: one for the bulk lane's handbook, one for the notes."""
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    proc = start_worker(tmp_path, concurrency=2, env={"BRAIN_EXTRACT_FACTS": "0"})  # the notes alone
    yield proc
    stop_worker(proc)


def test_a_burst_of_notes_from_two_organisations_is_ready_within_seconds_while_the_bulk_lane_is_busy(two_slot_worker):
    # Messages of one organisation's notes take the other's turns (memory.documents.lanes): each
    # message still ingests one note, so no note is left for the sweep, and none is ingested twice.
    first, second = make_org(), make_org()
    handbook = add_document(actor=make_actor(first), title="Handbook", content=BIG).document
    assert wait_for(lambda: Document.objects.get(pk=handbook.pk).status == "processing", first)
    notes = [
        add_document(actor=make_actor(org), title=f"Note {n}", content=f"Standup {n} moved to room {n}.").document
        for n, org in enumerate([first] * 10 + [second] * 10)
    ]
    ids = [note.pk for note in notes]
    waiting = Document.objects.filter(pk__in=ids)

    def all_ready() -> bool:
        unready = waiting.exclude(status="ready")
        late = list(unready.filter(recorded_at__lt=timezone.now() - timedelta(seconds=NOTES_READY_WITHIN)))
        assert not late, f"notes not ready {NOTES_READY_WITHIN} s after their save: {[(d.pk, d.status) for d in late]}"
        return not unready.exists()

    wait_while_progressing(all_ready, documents_progress(waiting), what="every note to be ready")
    took = [(d.processed_at - d.recorded_at).total_seconds() for d in waiting if d.processed_at]
    print(f"20 notes ready {min(took):.1f} to {max(took):.1f} s after their save")
    assert {d.attempts for d in waiting} == {1}  # none was ingested twice
    ordinals = list(Chunk.objects.filter(document__in=ids).values_list("document_id", "ordinal"))
    assert len(ordinals) == len(set(ordinals)) == sum(d.chunk_count for d in waiting)
