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
from collections.abc import Callable
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
