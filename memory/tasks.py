from celery import Task, shared_task

from memory.services import ingest_document, sweep_stuck_documents


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=3)
def ingest_document_task(self: Task, document_id: int) -> str:
    return ingest_document(document_id=document_id, task_id=self.request.id)


@shared_task
def sweep_stuck_documents_task() -> int:
    return sweep_stuck_documents()
