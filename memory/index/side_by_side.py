"""A search's retrievers, run side by side on database connections of their own.

The arms of a search do not depend on one another: the keyword arm needs only the question, the
vector arms only its embedding. Run in turn their times add up; started on a few threads that
live as long as the process, Postgres serves them on other cores while the caller embeds the
question or runs the next arm (measured: docs/benchmarks-log.md, "Search latency").

They run in turn, on the caller's thread, when:

- the caller's connection is inside a transaction: another connection would not see what it has
  not committed (a test's rows are exactly that), nor read under the same snapshot;
- ``BRAIN_SEARCH_THREADS`` is 0.

Each task runs in a copy of the caller's context, so what ``brain.infra.replicas`` decides (replica or
primary) and what one tool call keeps (``brain.core.actors.one_call``) are the caller's. A task's
thread closes a connection that is too old or broken before using it, as a request would.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections

from brain.infra.replicas import read_alias

T = TypeVar("T")
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


class Started(Generic[T]):
    """A read that was started: ``result()`` waits for it; ``ms`` is how long it ran itself."""

    def __init__(self, future: Future[tuple[T, float]]) -> None:
        self._future = future
        self.ms = 0.0

    def result(self) -> T:
        value, self.ms = self._future.result()
        return value


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - started) * 1000


def _in_pool_thread(fn: Callable[[], T]) -> tuple[T, float]:
    close_old_connections()
    return _timed(fn)


def _executor() -> ThreadPoolExecutor:
    """This process's search threads. A process forked from one that had them (a worker child)
    has none of those threads, so it starts its own."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(settings.BRAIN_SEARCH_THREADS, thread_name_prefix="brain-search")
            _pool_pid = os.getpid()
        return _pool


def may_run_apart() -> bool:
    """Whether reads started now may run on other connections than the caller's."""
    if settings.BRAIN_SEARCH_THREADS < 1:
        return False
    return not (connections[DEFAULT_DB_ALIAS].in_atomic_block or connections[read_alias()].in_atomic_block)


def start(fn: Callable[[], T], *, apart: bool) -> Started[T]:
    """Start ``fn`` on a search thread when ``apart`` (``may_run_apart()``, asked once per search),
    else run it now on this thread."""
    if apart:
        return Started(_executor().submit(contextvars.copy_context().run, _in_pool_thread, fn))
    done: Future[tuple[T, float]] = Future()
    done.set_result(_timed(fn))  # a failure is raised here, before anything else uses the connection
    return Started(done)
