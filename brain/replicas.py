"""Read replicas: which reads may go to the streaming replica, and who reads their own writes.

Nothing here matters unless ``DATABASE_REPLICA_URL`` is set (``brain.settings`` then adds the
``replica`` database and installs ``ReplicaRouter``). The rules, in one place:

- A read goes to the replica only inside ``reading_from_replica()``, and never while the primary
  connection is inside a transaction: a read inside a write's transaction must see that write.
- Every write goes to the primary; migrations run on the primary only.
- ``brain.mcp.invoke.execute`` runs a read-only tool inside ``reading_from_replica()`` unless its
  caller wrote within ``BRAIN_READ_YOUR_WRITES_SECONDS`` (remembered in Redis, so every web
  process sees it; when Redis cannot be asked, the caller reads from the primary).
- A tool whose replica connection fails is run once more on the primary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import redis
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections

if TYPE_CHECKING:
    from brain.actors import Actor

REPLICA = "replica"
logger = logging.getLogger("brain.replicas")
T = TypeVar("T")
_READING: ContextVar[bool] = ContextVar("brain_reading_from_replica", default=False)


def configured() -> bool:
    return REPLICA in connections.settings


@contextmanager
def reading_from_replica() -> Iterator[None]:
    """Inside it, reads that are not part of a transaction on the primary go to the replica."""
    token = _READING.set(True)
    try:
        yield
    finally:
        _READING.reset(token)


def read_alias() -> str:
    """The database a read made now goes to. Raw SQL reads use ``connections[read_alias()]``."""
    if _READING.get() and configured() and not connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return REPLICA
    return DEFAULT_DB_ALIAS


class ReplicaRouter:
    """Installed only when a replica is configured (see the module's docstring)."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        return read_alias()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: object, obj2: object, **hints: Any) -> bool:
        return True  # the replica holds the same rows as the primary

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


# --- Reading one's own writes -------------------------------------------------------------


@cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)


def _key(actor: Actor) -> str:
    return f"brain:wrote:{actor.org.pk}:{actor.user.pk}"


def mark_written(actor: Actor) -> None:
    """The actor's user just changed something: for the next few seconds they read from the primary."""
    if not configured() or settings.BRAIN_READ_YOUR_WRITES_SECONDS == 0:
        return
    try:
        _redis(settings.REDIS_URL).set(_key(actor), 1, ex=settings.BRAIN_READ_YOUR_WRITES_SECONDS)
    except redis.RedisError as exc:  # their next reads ask Redis too, and read from the primary while it is away
        logger.warning("could not note a write by user %s of org %s: %s", actor.user.pk, actor.org.pk, exc)


def wrote_recently(actor: Actor) -> bool:
    """Whether the actor's user wrote within the window; True when Redis cannot tell (the safe side)."""
    if settings.BRAIN_READ_YOUR_WRITES_SECONDS == 0:
        return False
    try:
        return bool(_redis(settings.REDIS_URL).exists(_key(actor)))
    except redis.RedisError as exc:
        logger.warning("cannot tell whether user %s wrote recently, reading from the primary: %s", actor.user.pk, exc)
        return True


def run_read(actor: Actor, what: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` (a read-only tool) on the replica when the actor may read there, else on the primary.

    A failure of the replica connection is logged and the call runs once more on the primary, so a
    replica that is down or cancels a query (a recovery conflict) costs one attempt, not the answer."""
    if not configured() or wrote_recently(actor):
        return fn()
    try:
        with reading_from_replica():
            return fn()
    except OperationalError as exc:
        logger.warning("%s failed reading from the replica, running it again on the primary: %s", what, exc)
        connections[REPLICA].close_if_unusable_or_obsolete()
        return fn()
