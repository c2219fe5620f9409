from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from contacts.services import RetryLater, deliver_request, sweep_queued_requests

DATABASE_RETRIES = 10
# Under the send lease, so a request still "sending" past its lease belongs to a dead task.
TIME_LIMIT = max(2, settings.BRAIN_SEND_LEASE_SECONDS * 9 // 10)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    soft_time_limit=TIME_LIMIT * 9 // 10,
    time_limit=TIME_LIMIT,
)
def deliver_request_task(self: Task, request_id: int) -> str:
    try:
        return deliver_request(request_id=request_id)
    except RetryLater as later:  # recorded on the request, which also counts the retries
        raise self.retry(countdown=later.seconds) from later
    except (OperationalError, InterfaceError) as exc:  # the database is away
        if self.request.retries >= DATABASE_RETRIES:
            raise
        countdown = min(10 * 2**self.request.retries, 300)
        raise self.retry(exc=exc, countdown=countdown, max_retries=DATABASE_RETRIES) from exc


@shared_task
def sweep_queued_requests_task(grace_seconds: int | None = None) -> int:
    return sweep_queued_requests(grace_seconds=grace_seconds)
