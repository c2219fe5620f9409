"""Queueing background work from services, once their transaction commits.

Services name the task instead of importing its module: task modules call services, never the
reverse, so the two never import each other. The message is sent by name (``send_task``), so a
process that never imported the task module (a web process) queues it just the same, routed by
``CELERY_TASK_ROUTES``. The row is saved before the message is sent, and a
broker that cannot be reached loses nothing: the row stays queued and a sweep sends it again.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

logger = logging.getLogger("brain.queue")


def send_on_commit(task_name: str, row_id: int, *, what: str, queue: str | None = None) -> None:
    """Queue ``task_name(row_id)`` when the current transaction commits (at once outside one);
    ``queue`` overrides the route, for work whose lane depends on the row (a long document's)."""
    transaction.on_commit(lambda: send_now(task_name, row_id, what=what, queue=queue))


def send_now(task_name: str, row_id: int, *, what: str, queue: str | None = None) -> None:
    try:
        current_app.send_task(task_name, args=[row_id], **({"queue": queue} if queue else {}))
    except Exception:  # the broker is down: the row is saved and queued; the sweep sends it later
        logger.warning("could not queue %s %s; the sweep will queue it again", what, row_id, exc_info=True)
