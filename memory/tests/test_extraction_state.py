"""Facts are never lost silently: deadlocks and transient errors are retried, failures stay marked
on the document, and the extraction sweep tries them again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import override_settings

from memory.documents.ingestion import ingest_document
from memory.graph.learning import extract_facts, sweep_pending_extractions
from memory.models import Document, Fact
from memory.tasks import extract_facts_task
from memory.tests.factories import save
from tests.progress import backends_gone, wait_until

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
    from brain.core.services import mark_memory_built
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
    monkeypatch.setattr("memory.graph.learning.time.sleep", lambda seconds: None)
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
    monkeypatch.setattr(
        "brain.infra.queueing.current_app.send_task", lambda name, args, **kw: sent.append((name, args))
    )
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
    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", lambda name, args, **kw: None)
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
    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", lambda name, args, **kw: sent.append(args))
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


# --- real faults: a deadlock Postgres breaks, a connection the server ends ---------------------

THREE = "Priya Shah, Sam Carter and Omar Reyes met about the renewal on 3 March 2026."
NAMES = ("Priya Shah", "Sam Carter", "Omar Reyes")


def _side_connection(**settings: str) -> psycopg.Connection:
    """A connection of the test's own to the test database, outside Django, in autocommit."""
    db = connection.settings_dict
    side = psycopg.connect(
        host=db["HOST"], port=db["PORT"] or None, user=db["USER"], dbname=db["NAME"], autocommit=True
    )
    for name, value in settings.items():
        side.execute(f"SET {name} = '{value}'")
    return side


def _lock_numbers(org_id: int) -> list[int]:
    """The advisory lock numbers extraction takes for ``NAMES``, in the order it takes them."""
    keys = [f"entity:{org_id}:{name.casefold()}" for name in NAMES]
    with connection.cursor() as cursor:
        cursor.execute("SELECT hashtext(k) AS n FROM unnest(%s::text[]) AS k ORDER BY n", [keys])
        return [row[0] for row in cursor.fetchall()]


class Extraction(threading.Thread):
    """Ingests one document on a connection of its own, and says which backend that is."""

    def __init__(self, document_id: int) -> None:
        super().__init__(daemon=True)
        self.document_id, self.pid = document_id, 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.pid = cursor.fetchone()[0]
            ingest_document(document_id=self.document_id)
        except BaseException as exc:  # pragma: no cover - reported by the test
            self.failure = exc
        finally:
            connection.close()

    def finished(self) -> None:
        wait_until(lambda: not self.is_alive(), what="the extraction to finish")
        assert self.failure is None, self.failure


def _waits_on_a_lock(pid_of: Callable[[], int]) -> Callable[[], bool]:
    return lambda: bool(pid_of()) and _backend_waits_on_a_lock(pid_of())


@pytest.mark.django_db(transaction=True)
def test_extraction_chosen_as_a_deadlocks_victim_tries_again_and_its_facts_land(actor, caplog):
    """A real deadlock: extraction holds the first name's lock and waits for the last, which a
    second connection holds while it waits for the first. Extraction closes the cycle, so Postgres
    ends its transaction; it must try again rather than leave the document without its facts."""
    document = save(actor, "Renewal", THREE, ingest=False)
    first, middle, last = _lock_numbers(actor.org.pk)
    # ``holder`` keeps extraction between its first and last lock until ``other`` waits for the
    # first; only then does extraction ask for the last and close the cycle. ``other`` never
    # looks for deadlocks in time, so the victim is extraction, whatever the machine's pace.
    holder, other = _side_connection(), _side_connection(deadlock_timeout="10min")
    holder.execute("SELECT pg_advisory_lock(%s)", [middle])
    other.execute("SELECT pg_advisory_lock(%s)", [last])
    other_pid = other.info.backend_pid
    extraction = Extraction(document.pk)
    extraction.start()
    wait_until(_waits_on_a_lock(lambda: extraction.pid), what="extraction to wait for the middle name's lock")

    def take_first_then_let_go() -> None:
        other.execute("SELECT pg_advisory_lock(%s)", [first])  # granted once extraction's transaction ends
        other.execute("SELECT pg_advisory_unlock_all()")

    taker = threading.Thread(target=take_first_then_let_go, daemon=True)
    taker.start()
    wait_until(_waits_on_a_lock(lambda: other_pid), what="the other connection to wait for the first name's lock")
    holder.execute("SELECT pg_advisory_unlock(%s)", [middle])
    extraction.finished()
    taker.join()
    holder.close()
    other.close()
    assert "deadlock detected" in caplog.text  # the fault was real
    document.refresh_from_db()
    assert (document.status, document.extraction, document.extraction_error) == ("ready", "done", "")
    assert Fact.objects.filter(document=document).exists()


@pytest.mark.django_db(transaction=True)
def test_extraction_whose_connection_the_server_ends_tries_again_on_a_new_one_and_its_facts_land(actor, caplog):
    """A database blip mid-extraction: its backend is terminated while it waits inside its
    transaction; it must try again on a new connection rather than lose the document's facts."""
    document = save(actor, "Renewal", THREE, ingest=False)
    holder = _side_connection()
    holder.execute("SELECT pg_advisory_lock(%s)", [_lock_numbers(actor.org.pk)[1]])
    extraction = Extraction(document.pk)
    extraction.start()
    wait_until(_waits_on_a_lock(lambda: extraction.pid), what="extraction to wait inside its transaction")
    holder.execute("SELECT pg_terminate_backend(%s)", [extraction.pid])
    wait_until(backends_gone([extraction.pid]), what="the server to end extraction's backend")
    holder.execute("SELECT pg_advisory_unlock_all()")
    holder.close()
    extraction.finished()
    assert "terminating connection due to administrator command" in caplog.text  # the fault was real
    document.refresh_from_db()
    assert (document.status, document.extraction, document.extraction_error) == ("ready", "done", "")
    assert Fact.objects.filter(document=document).exists()
