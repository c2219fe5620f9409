from celery import Task, shared_task

from contacts.services import deliver_request, give_up, sweep_queued_requests
from contacts.transports import TransportError

MAX_RETRIES = 6


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_RETRIES)
def deliver_request_task(self: Task, request_id: int) -> str:
    try:
        return deliver_request(request_id=request_id)
    except TransportError as exc:  # only temporary errors reach here: retry with backoff, then give up
        if self.request.retries >= MAX_RETRIES:
            give_up(request_id=request_id, reason=str(exc))
            return "failed"
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 1800)) from exc


@shared_task
def sweep_queued_requests_task() -> int:
    return sweep_queued_requests()
