"""GitHub webhooks: signed deliveries queue a sync at once, a deleted issue is withdrawn at once,
bad signatures are refused and a delivery seen before is not acted on twice."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from django.core.cache import cache
from django.test import Client

from connectors import sync
from connectors.models import Connection, SyncedItem
from connectors.tests.test_github_sync import connect, documents

pytestmark = pytest.mark.django_db


def deliver(connection, event, payload, *, secret=None, delivery="d-1"):
    body = json.dumps(payload).encode()
    key = (secret or connection.webhook_secret).encode()
    signature = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
    return Client().post(
        f"/connectors/hooks/github/{connection.pk}/",
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature, "X-GitHub-Event": event, "X-GitHub-Delivery": delivery},
    )


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def test_a_signed_change_queues_a_sync_now(github, admin_actor, monkeypatch):  # noqa: F811
    queued: list[int] = []

    def send_task(name, args, **kw):
        if name == "connectors.tasks.sync_connection_task":
            queued.append(args[0])

    monkeypatch.setattr("brain.queueing.current_app.send_task", send_task)
    connection = connect(admin_actor)
    Connection.objects.filter(pk=connection.pk).update(next_sync_at=None)
    payload = {"action": "edited", "issue": {"number": 1}, "repository": {"full_name": "acme/api"}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("django.db.transaction.on_commit", lambda fn, **kw: fn())
        answer = deliver(connection, "issues", payload)
    assert answer.status_code == 202
    assert queued == [connection.pk]
    connection.refresh_from_db()
    assert connection.next_sync_at is not None


def test_bad_signatures_and_replays_are_not_acted_on(github, admin_actor):  # noqa: F811
    connection = connect(admin_actor)
    payload = {"zen": "Keep it logically awesome."}
    assert deliver(connection, "ping", payload, secret="not the secret").status_code == 401
    assert deliver(connection, "ping", payload).json() == {"status": "noted"}
    assert deliver(connection, "ping", payload).json() == {"status": "already seen"}
    missing = Client().post(f"/connectors/hooks/github/{connection.pk}/", b"{}", content_type="application/json")
    assert missing.status_code == 401


def test_a_deleted_issue_is_withdrawn_at_once(github, admin_actor):  # noqa: F811
    github.add_issue("acme/api", 7, updated="2026-11-02T10:00:00Z")
    connection = connect(admin_actor)
    sync.sync_connection(connection.pk)
    assert documents(connection).count() == 1
    payload = {"action": "deleted", "issue": {"number": 7}, "repository": {"full_name": "acme/api"}}
    assert deliver(connection, "issues", payload, delivery="d-7").json() == {"status": "withdrawn"}
    assert documents(connection).count() == 0
    assert SyncedItem.objects.get(connection=connection).withdrawn_at is not None
