"""Waiting on background work (workers, servers, other processes) in tests.

A busy machine makes everything slower, not stuck: a test waits as long as the work moves, and
fails only when nothing has moved for a generous while. ``progress`` is any value that changes
when something happens (documents ready and attempts made, a log that grows, deliveries sent);
the wait fails when it has stayed the same for ``idle`` seconds. No test should size a budget for
a quiet machine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# How long nothing may move before a wait gives up; raise it on a machine that stalls for longer.
IDLE_SECONDS = float(os.environ.get("BRAIN_TEST_IDLE_SECONDS", "180"))


def wait_while_progressing(
    done: Callable[[], bool],
    progress: Callable[[], Any],
    *,
    what: str,
    idle: float = IDLE_SECONDS,
    poll: float = 0.2,
    details: Callable[[], str] = lambda: "",
) -> None:
    """Return once ``done()``; raise AssertionError when ``progress()`` has not changed for ``idle``
    seconds (and ``done()`` still is not true). ``details`` is added to the failure (a log)."""
    last, since = progress(), time.monotonic()
    while not done():
        time.sleep(poll)
        now = progress()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > idle:
            stalled = f"nothing moved for {idle:.0f} s while waiting for {what} (last: {now!r})"
            raise AssertionError(f"{stalled}\n{details()}")


def wait_until(done: Callable[[], bool], *, what: str, within: float = IDLE_SECONDS, poll: float = 0.05) -> None:
    """Return once ``done()``; raise AssertionError after ``within`` seconds. For a change with no
    progress to watch, such as the server ending a backend whose client has gone: it comes when the
    server gets to it, which on a busy machine is later, never a fixed moment after the cause."""
    wait_while_progressing(done, lambda: None, what=what, idle=within, poll=poll)


def backends_gone(pids: Iterable[int]) -> Callable[[], bool]:
    """Whether PostgreSQL has ended each of the backends ``pids``: a closed or terminated connection's
    backend lives on until the server has run its exit (and released its locks, which comes first)."""
    from django.db import connection

    wanted = list(pids)

    def gone() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # pg_stat_activity is read once a transaction
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [wanted])
            return cursor.fetchone()[0] == 0

    return gone


def log_size(*paths: Path) -> Callable[[], tuple[int, ...]]:
    """Progress of starting processes: their logs grow while they start."""
    return lambda: tuple(p.stat().st_size if p.exists() else -1 for p in paths)


def documents_progress(documents: Any) -> Callable[[], tuple[Any, ...]]:
    """Progress of ingestion over a queryset of documents: how many are ready, how many attempts
    were made, when the last was claimed and finished, and how far extraction got."""
    from django.db.models import Count, Max, Q, Sum

    def snapshot() -> tuple[Any, ...]:
        row = documents.aggregate(
            ready=Count("pk", filter=Q(status="ready")),
            attempts=Sum("attempts"),
            claimed=Max("claimed_at"),
            processed=Max("processed_at"),
            extracted=Count("pk", filter=Q(extraction__in=["done", "failed"])),
        )
        return tuple(row.values())

    return snapshot
