from datetime import datetime

from celery import Task, shared_task
from django.conf import settings

from memory.documents.failures import is_transient
from memory.documents.ingestion import ingest_next, release_worker_claims, sweep_stuck_documents
from memory.documents.trash import purge_due_trash
from memory.graph.learning import extract_facts, sweep_pending_extractions
from memory.index.org_indexes import sync_org_indexes
from memory.upload.reading import read_next, sweep_stuck_uploads

# Retries of a temporary failure: 10 s doubling, at most 5 minutes apart. How many times a document
# is tried is counted on the document (BRAIN_INGEST_MAX_ATTEMPTS), so a message queued again by a
# sweep does not start a new count; the database may be away longer, so that count is Celery's.
DATABASE_RETRIES = 10


def lane(task: Task) -> str:
    """The queue a message came from: the lane a message whose row is gone still serves."""
    return str((task.request.delivery_info or {}).get("routing_key") or "")


def backoff(retries: int) -> int:
    return int(min(10 * 2**retries, 300))


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    soft_time_limit=settings.BRAIN_INGEST_SOFT_TIME_LIMIT_SECONDS,
    time_limit=settings.BRAIN_INGEST_TIME_LIMIT_SECONDS,
)
def ingest_document_task(self: Task, document_id: int) -> str:
    try:
        outcome = ingest_next(
            document_id=document_id, lane=lane(self), task_id=self.request.id, worker=self.request.hostname or ""
        )
    except Exception as exc:
        if not is_transient(exc) or self.request.retries >= DATABASE_RETRIES:
            raise
        raise self.retry(exc=exc, countdown=backoff(self.request.retries), max_retries=DATABASE_RETRIES) from exc
    if outcome == "retry":
        raise self.retry(countdown=backoff(self.request.retries))
    return outcome


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def read_upload_task(self: Task, upload_id: int) -> str:
    """Read an uploaded file into documents, in a process bounded by the reading budget; sent to
    the lane its size calls for (memory.upload.reading.lane_of)."""
    return read_next(upload_id=upload_id, lane=lane(self), task_id=self.request.id)


@shared_task
def sweep_stuck_documents_task(queued_grace_seconds: int | None = None) -> int:
    grace = settings.BRAIN_QUEUED_GRACE_SECONDS if queued_grace_seconds is None else queued_grace_seconds
    return sweep_stuck_documents(queued_grace_seconds=grace) + sweep_stuck_uploads(queued_grace_seconds=grace)


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.BRAIN_INGEST_SOFT_TIME_LIMIT_SECONDS,
    time_limit=settings.BRAIN_INGEST_TIME_LIMIT_SECONDS,
)
def extract_facts_task(document_id: int) -> str:
    """A ready document's facts, tried again by the extraction sweep; its failures stay on the row."""
    return extract_facts(document_id=document_id)


@shared_task
def sweep_pending_extractions_task(grace_seconds: int | None = None) -> int:
    return sweep_pending_extractions(grace_seconds=grace_seconds)


@shared_task
def recover_worker_task(worker: str, started_at: str) -> int:
    """Sent by a worker as it starts: what it held when it last died goes back to the queue."""
    return release_worker_claims(worker=worker, started_before=datetime.fromisoformat(started_at))


@shared_task
def sync_org_indexes_task() -> dict[str, list[str]]:
    """Every ten minutes: the per-organisation vector indexes that are missing are built."""
    report = sync_org_indexes()
    return {"created": report.created, "dropped": report.dropped}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def purge_due_trash_task() -> int:
    """Nightly: delete for good what has been in the trash past its organisation's period. Safe to
    run twice or after a run that stopped midway: each document is checked and deleted in its own
    transaction (memory.documents.trash)."""
    return purge_due_trash()
