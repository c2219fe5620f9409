"""Read replicas: which reads may go to the streaming replica, and who reads their own writes.

Nothing here matters unless ``DATABASE_REPLICA_URL`` is set (``brain.settings`` then adds the
``replica`` database and installs ``ReplicaRouter``). The rules, in one place:

- A read goes to the replica only inside ``reading_from_replica()``, and never while the primary
  connection is inside a transaction: a read inside a write's transaction must see that write.
- Every write goes to the primary; migrations run on the primary only.
- ``brain.mcp.invoke.execute`` runs a read-only tool inside ``reading_from_replica()`` unless its
  caller wrote within ``BRAIN_READ_YOUR_WRITES_SECONDS`` (remembered in Redis, so every web
  process sees it; when Redis cannot be asked, the caller reads from the primary).
  A REST write (``brain.api.metering``) and a web page that changed something
  (``WebWritesMiddleware``) count as writes too.
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
from django.http import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from brain.core.actors import Actor

REPLICA = "replica"
logger = logging.getLogger("brain.replicas")
T = TypeVar("T")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
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


def _key(org_id: int, user_id: int) -> str:
    return f"brain:wrote:{org_id}:{user_id}"


def mark_written(actor: Actor) -> None:
    """The actor's user just changed something: for the next few seconds they read from the primary."""
    _note_writes(actor.user.pk, [actor.org.pk])


def _note_writes(user_id: int, org_ids: list[int]) -> None:
    seconds = settings.BRAIN_READ_YOUR_WRITES_SECONDS
    if not configured() or seconds == 0 or not org_ids:
        return
    try:
        with _redis(settings.REDIS_URL).pipeline(transaction=False) as pipe:
            for org_id in org_ids:
                pipe.set(_key(org_id, user_id), 1, ex=seconds)
            pipe.execute()
    except redis.RedisError as exc:  # their next reads ask Redis too, and read from the primary while it is away
        logger.warning("could not note a write by user %s: %s", user_id, exc)


class WebWritesMiddleware:
    """A page that changed something (an unsafe request by a signed-in user that did not fail)
    sends that user's reads to the primary for the window, in each of their organisations: the
    page does not say which one it changed. Without a replica it does nothing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if not configured() or request.method in SAFE_METHODS or response.status_code >= 400:
            return response
        if user is not None and user.is_authenticated:
            from brain.models import Membership

            _note_writes(user.pk, list(Membership.objects.filter(user=user).values_list("org_id", flat=True)))
        return response


def wrote_recently(actor: Actor) -> bool:
    """Whether the actor's user wrote within the window; True when Redis cannot tell (the safe side)."""
    if settings.BRAIN_READ_YOUR_WRITES_SECONDS == 0:
        return False
    try:
        return bool(_redis(settings.REDIS_URL).exists(_key(actor.org.pk, actor.user.pk)))
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
