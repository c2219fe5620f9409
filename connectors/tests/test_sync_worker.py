"""A sync run by a real Celery worker that is killed between pages: the lease keeps a second worker
off the connection until it runs out, and the next sync goes on from the last saved page, so every
issue ends up in Brain exactly once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from connectors import sync
from connectors.github import PER_PAGE
from connectors.models import Connection, SyncedItem
from connectors.tasks import sync_connection_task
from connectors.tests.github_server import github_server
from connectors.tests.test_github_sync import connect, documents
from tests.progress import wait_while_progressing
from tests.worker_process import kill_worker, start_worker, stop_worker

pytestmark = pytest.mark.django_db(transaction=True)
ISSUES = PER_PAGE * 3  # three pages
HELD_PAGE = 3  # the worker is killed while it waits for this page


@pytest.fixture
def github():
    with github_server() as fake:
        yield fake


@pytest.fixture
def worker(tmp_path, github):
    """Starts real workers that reach the stand-in (each call one more, its own log); all stop at the end."""
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no stale messages from earlier tests
    started: list[Any] = []

    def start() -> Any:
        proc = start_worker(tmp_path, env={"BRAIN_GITHUB_API_URL": github.base}, log_name=f"worker{len(started)}.log")
        started.append(proc)
        return proc

    yield start
    for proc in started:
        stop_worker(proc)


def sync_progress(connection: Connection, github: Any) -> Any:
    """What moves while a sync runs: requests to the stand-in, items kept, the saved cursor."""

    def snapshot() -> tuple[Any, ...]:
        row = Connection.objects.values_list("cursor", "lease_until", "last_sync_at").get(pk=connection.pk)
        return len(github.requests), SyncedItem.objects.filter(connection=connection).count(), str(row)

    return snapshot


def test_a_worker_killed_mid_sync_leaves_every_issue_in_brain_exactly_once(github, admin_actor, worker):  # noqa: F811
    for n in range(1, ISSUES + 1):
        github.add_issue("acme/api", n, updated=f"2026-11-{1 + n // 24:02d}T{n % 24:02d}:00:00Z")
    github.hold_from_page = HELD_PAGE
    connection = connect(admin_actor)
    first = worker()

    sync_connection_task.delay(connection.pk)
    wait_while_progressing(github.held.is_set, sync_progress(connection, github), what="the sync to reach page 3")
    connection.refresh_from_db()
    assert f"page={HELD_PAGE}" in connection.cursor["acme/api"]["next"]  # two pages saved, the third not
    assert SyncedItem.objects.filter(connection=connection).count() == PER_PAGE * (HELD_PAGE - 1)
    kill_worker(first)  # mid-sync, while it waits for the third page
    github.release.set()

    connection.refresh_from_db()
    assert connection.lease_until > timezone.now() + timedelta(minutes=5)  # still held by the dead worker
    assert connection.last_sync_at is None
    assert sync.sync_connection(connection.pk).state == "busy"  # no one else runs it meanwhile
    assert connection.pk not in sync.due_connections()

    Connection.objects.filter(pk=connection.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    github.requests.clear()
    worker()
    sync_connection_task.delay(connection.pk)

    def finished() -> bool:
        done = Connection.objects.filter(pk=connection.pk, lease_until__isnull=True, last_sync_at__isnull=False)
        return done.exists()

    wait_while_progressing(finished, sync_progress(connection, github), what="the sync to finish")
    connection.refresh_from_db()
    assert connection.last_error == ""
    assert "next" not in connection.cursor["acme/api"]
    assert connection.cursor["acme/api"]["since"] == max(i["updated_at"] for i in github.repos["acme/api"])
    listings = [path for path in github.requests if "/issues?" in path]
    assert f"page={HELD_PAGE}" in listings[0]  # went on from the page it was killed on
    expected = {f"github:{connection.pk}:acme/api#{n}" for n in range(1, ISSUES + 1)}
    per_item = dict(documents(connection).values_list("external_id").annotate(n=Count("pk")))
    assert per_item == dict.fromkeys(expected, 1)  # every issue, once, no gaps
    kept = SyncedItem.objects.filter(connection=connection)
    assert kept.count() == ISSUES
    assert set(kept.values_list("source_id", flat=True)) == {f"acme/api#{n}" for n in range(1, ISSUES + 1)}
    assert connection.items == ISSUES
