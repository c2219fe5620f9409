"""Queueing background work from services, through an outbox the broker's state cannot stall.

Services name the task instead of importing its module: task modules call services, never the
reverse, so the two never import each other. The message is sent by name (``send_task``), so a
process that never imported the task module (a web process) queues it just the same, routed by
``CELERY_TASK_ROUTES``.

A message is first a row (``OutboxMessage``), written in the same transaction as the row it is
about, so it exists exactly when that row does. Once the transaction commits, one short attempt
sends it, on a broker connection whose every wait is bounded (``SEND_TIMEOUT``), and deletes the
row; a broker that is down, frozen (it accepts the connection and never answers) or slow costs
the request that attempt at most, and after a failure a process skips its attempts for
``COOL_OFF`` seconds. Whatever was not sent stays in the outbox, and ``send_pending`` sends it
when the broker answers again (beat, every ``BRAIN_OUTBOX_SWEEP_SECONDS``, and each worker as it
connects). A message may so reach the worker twice; every task claims its row first.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from datetime import timedelta
from typing import Any

from celery import current_app
from django.db import transaction
from django.utils import timezone
from kombu import Connection

from brain.models import OutboxMessage

logger = logging.getLogger("brain.queue")

SEND_TIMEOUT = 0.3  # seconds: connecting to the broker, and each of its answers
COOL_OFF = 5.0  # seconds after a failed send during which saves leave their messages to the sweep
SETTLED = timedelta(seconds=5)  # the sweep leaves younger rows to their own attempt after commit
BATCH = 1000


class _Broker:
    """One bounded connection per thread, dropped when it fails, and when sends last failed."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.failed_at = 0.0

    def connection(self) -> Connection:
        if getattr(self.local, "connection", None) is None:
            options = {**current_app.conf.broker_transport_options}
            options.update(socket_timeout=SEND_TIMEOUT, socket_connect_timeout=SEND_TIMEOUT, max_retries=0)
            self.local.connection = current_app.connection_for_write(
                transport_options=options, connect_timeout=SEND_TIMEOUT
            )
        return self.local.connection

    def drop(self) -> None:
        connection, self.local.connection = getattr(self.local, "connection", None), None
        if connection is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close; it is dropped either way
                connection.release()

    def cooling(self) -> bool:
        return time.monotonic() - self.failed_at < COOL_OFF


BROKER = _Broker()


def send_on_commit(task_name: str, row_id: int, *, what: str, queue: str | None = None) -> None:
    """Queue ``task_name(row_id)`` with the current transaction (at once outside one): its outbox row
    commits with it, and one bounded attempt sends it after the commit. ``queue`` overrides the
    route, for work whose lane depends on the row (a long document's)."""
    message = OutboxMessage.objects.create(task=task_name, row_id=row_id, queue=queue or "", what=what)
    transaction.on_commit(lambda: _attempt(message))


def _attempt(message: OutboxMessage) -> None:
    if BROKER.cooling():
        return  # the broker failed a moment ago: the sweep sends it
    if send_now(message.task, message.row_id, what=message.what, queue=message.queue or None):
        OutboxMessage.objects.filter(pk=message.pk).delete()


def send_now(task_name: str, row_id: int, *, what: str, queue: str | None = None) -> bool:
    """Send ``task_name(row_id)`` to the broker, waiting at most about ``2 * SEND_TIMEOUT``; for
    sweeps, whose rows are their own record. Returns whether the broker took it."""
    options: dict[str, Any] = {"queue": queue} if queue else {}
    try:
        current_app.send_task(task_name, args=[row_id], connection=BROKER.connection(), retry=False, **options)
    except Exception as exc:  # the broker is away or frozen: the row is saved; a sweep sends it later
        BROKER.drop()
        BROKER.failed_at = time.monotonic()
        logger.warning("could not queue %s %s (%s: %s); a sweep will queue it", what, row_id, type(exc).__name__, exc)
        return False
    return True


def send_pending(*, settled: timedelta = SETTLED) -> int:
    """Send the outbox's messages older than ``settled``, oldest first, until the broker fails;
    returns how many it took. Safe to run anywhere and any number of times."""
    pending = OutboxMessage.objects.filter(created_at__lt=timezone.now() - settled).order_by("pk")
    sent = 0
    for message in list(pending[:BATCH]):
        if not send_now(message.task, message.row_id, what=message.what, queue=message.queue or None):
            break
        OutboxMessage.objects.filter(pk=message.pk).delete()
        sent += 1
    return sent
