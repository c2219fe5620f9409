"""Reachability checks for health, check_health and the admin."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection

from brain.celery import app as celery_app

CheckFn = Callable[[], str]
_CHECKS: dict[str, CheckFn] = {}


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    ms: float


def register_check(name: str) -> Callable[[CheckFn], CheckFn]:
    """A check returns a short detail when the part works and raises when it does not."""

    def decorator(fn: CheckFn) -> CheckFn:
        _CHECKS[name] = fn
        return fn

    return decorator


@register_check("database")
def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the pgvector extension is not installed; run manage.py migrate")
    return f"PostgreSQL {connection.pg_version // 10000}, pgvector {row[0]}"  # type: ignore[attr-defined]


@register_check("redis")
def _redis() -> str:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    try:
        client.ping()
        return f"Redis {client.info('server').get('redis_version', '?')}"
    finally:
        client.close()


_worker_cache: tuple[float, str] | None = None


@register_check("queue")
def _queue() -> str:
    global _worker_cache
    now = time.monotonic()
    if _worker_cache and now - _worker_cache[0] < 10:
        return _worker_cache[1]
    replies = celery_app.control.broadcast("ping", reply=True, timeout=1.0, limit=1)
    if not replies:
        raise RuntimeError("no Celery worker answered; start one (./brainctl run does)")
    detail = f"{len(replies)} worker(s) answering"
    _worker_cache = (now, detail)
    return detail


def run_checks(names: list[str] | None = None) -> list[CheckResult]:
    results = []
    for name, fn in _CHECKS.items():
        if names and name not in names:
            continue
        started = time.perf_counter()
        try:
            detail, ok = fn(), True
        except Exception as exc:  # a check reports any failure as "down", with its reason
            detail, ok = f"{type(exc).__name__}: {exc}"[:300], False
        results.append(CheckResult(name, ok, detail, round((time.perf_counter() - started) * 1000, 1)))
    return results
