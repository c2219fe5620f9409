"""Webhooks: signed deliveries queue a sync at once, a deleted issue is withdrawn at once, bad
signatures are refused, a body that is not what the source sends is a 400 that says why, a body
accepted before is not acted on twice (whatever the unsigned headers say), and the webhook secret
is sealed at rest and survives a key rotation."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import timedelta
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from connectors import sync
from connectors.models import Connection, Recheck, SyncedItem, WebhookDelivery
from connectors.sealing import unseal_secret
from connectors.tests import test_slack
from connectors.tests.test_github_sync import connect, documents

pytestmark = pytest.mark.django_db


def deliver(connection, event, payload, *, secret=None, delivery="d-1"):
    return deliver_body(connection, event, json.dumps(payload).encode(), secret=secret, delivery=delivery)


def deliver_body(connection, event, body, *, secret=None, delivery="d-1"):
    key = (secret or connection.webhook_secret).encode()
    signature = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
    headers = {"X-Hub-Signature-256": signature, "X-GitHub-Event": event}
    if delivery is not None:
        headers["X-GitHub-Delivery"] = delivery
    return Client().post(
        f"/connectors/hooks/github/{connection.pk}/", body, content_type="application/json", headers=headers
    )


def deliver_slack(connection, body):
    stamp = str(int(time.time()))
    key = test_slack.SECRET.encode()
    signature = "v0=" + hmac.new(key, f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return Client().post(
        f"/connectors/hooks/slack/{connection.pk}/",
        body,
        content_type="application/json",
        headers={"X-Slack-Signature": signature, "X-Slack-Request-Timestamp": stamp},
    )


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def test_a_signed_change_queues_a_sync_now(github, admin_actor, monkeypatch):  # noqa: F811
    queued: list[int] = []

    def send_task(name, args, **kw):
        if name == "connectors.tasks.sync_connection_task":
            queued.append(args[0])

    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", send_task)
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


ISSUE = {"action": "edited", "issue": {"number": 1}, "repository": {"full_name": "acme/api"}}
EVENT = {"type": "message", "channel": "C1", "ts": "1.2"}
MESSAGE = {"type": "event_callback", "event_id": "Ev9", "event": EVENT}
# (what is sent, words the answer must hold)
GITHUB_BAD = [
    (b"not json", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"[" * 100_000, "not JSON"),
    (b"[1, 2]", "an array"),
    (b'"deleted"', "a string"),
    (b"7", "a number"),
    (b"null", "null"),
    (b"{}", "repository must be an object; it is missing"),
    (json.dumps({**ISSUE, "repository": "acme/api"}).encode(), "repository must be an object; it is a string"),
    (json.dumps({**ISSUE, "repository": {"full_name": 3}}).encode(), "repository.full_name must be a string"),
    (json.dumps({**ISSUE, "issue": {"number": "1"}}).encode(), "issue.number must be a number; it is a string"),
    (json.dumps({**ISSUE, "issue": {"number": True}}).encode(), "issue.number must be a number; it is a boolean"),
    (json.dumps({**ISSUE, "issue": None}).encode(), "issue must be an object; it is null"),
    (json.dumps({**ISSUE, "action": ["deleted"]}).encode(), "action must be a string; it is an array"),
]
SLACK_BAD = [
    (b"not json", "not JSON"),
    (b"[]", "an array"),
    (b'"x"', "a string"),
    (b"1.5", "a number"),
    (b"null", "null"),
    (b"{}", "type must be a string; it is missing"),
    (b'{"type": "url_verification"}', "challenge must be a string; it is missing"),
    (b'{"type": "url_verification", "challenge": 5}', "challenge must be a string; it is a number"),
    (json.dumps({**MESSAGE, "event": "message"}).encode(), "event must be an object; it is a string"),
    (json.dumps({**MESSAGE, "event_id": 9}).encode(), "event_id must be a string"),
    (json.dumps({**MESSAGE, "event": {"type": "message"}}).encode(), "event.channel must be a string"),
    (json.dumps({**MESSAGE, "event": {**EVENT, "ts": 1.2}}).encode(), "event.ts must be a string"),
    (json.dumps({**MESSAGE, "event": {**EVENT, "message": []}}).encode(), "event.message must be an"),
    (
        json.dumps({**MESSAGE, "event": {**EVENT, "previous_message": {"thread_ts": 2}}}).encode(),
        "event.previous_message.thread_ts must be a string",
    ),
]


@pytest.mark.parametrize(("body", "said"), GITHUB_BAD)
def test_a_signed_github_body_not_of_githubs_shape_is_a_400_that_says_why(github, admin_actor, body, said):  # noqa: F811
    connection = connect(admin_actor)
    Connection.objects.filter(pk=connection.pk).update(next_sync_at=None)
    answer = deliver_body(connection, "issues", body)
    assert answer.status_code == 400
    assert said in answer.json()["error"]
    assert not WebhookDelivery.objects.exists()
    assert Connection.objects.get(pk=connection.pk).next_sync_at is None


@pytest.mark.parametrize(("body", "said"), SLACK_BAD)
def test_a_signed_slack_body_not_of_slacks_shape_is_a_400_that_says_why(admin_actor, body, said):
    connection = test_slack.connect(admin_actor)
    Connection.objects.filter(pk=connection.pk).update(next_sync_at=None)
    answer = deliver_slack(connection, body)
    assert answer.status_code == 400
    assert said in answer.json()["error"]
    assert not WebhookDelivery.objects.exists()
    assert not Recheck.objects.exists()
    assert Connection.objects.get(pk=connection.pk).next_sync_at is None


def test_a_replayed_deletion_without_its_delivery_header_changes_nothing(github, admin_actor):  # noqa: F811
    github.add_issue("acme/api", 7, updated="2026-11-02T10:00:00Z")
    connection = connect(admin_actor)
    sync.sync_connection(connection.pk)
    deleted = {"action": "deleted", "issue": {"number": 7}, "repository": {"full_name": "acme/api"}}
    assert deliver(connection, "issues", deleted, delivery="d-7").json() == {"status": "withdrawn"}
    github.add_issue("acme/api", 7, updated="2026-11-03T10:00:00Z")  # back at the source, synced again
    sync.sync_connection(connection.pk)
    assert documents(connection).count() == 1
    cache.clear()  # what is remembered is in the database, not a cache a restart empties

    for delivery in (None, "d-other"):
        replay = deliver(connection, "issues", deleted, delivery=delivery)
        assert (replay.status_code, replay.json()) == (200, {"status": "already seen"})

    assert documents(connection).count() == 1
    assert SyncedItem.objects.get(connection=connection).withdrawn_at is None


def test_a_body_is_acted_on_again_only_after_the_replay_window(github, admin_actor, settings, monkeypatch):  # noqa: F811
    from connectors import tasks

    monkeypatch.setattr(tasks.sync_connection_task, "delay", lambda pk: None)
    settings.BRAIN_WEBHOOK_REPLAY_DAYS = 2
    connection = connect(admin_actor)
    assert deliver(connection, "issues", ISSUE).status_code == 202
    WebhookDelivery.objects.update(received_at=timezone.now() - timedelta(days=1))
    assert deliver(connection, "issues", ISSUE).json() == {"status": "already seen"}
    WebhookDelivery.objects.update(received_at=timezone.now() - timedelta(days=3))
    assert deliver(connection, "issues", ISSUE).status_code == 202
    assert WebhookDelivery.objects.count() == 1


def test_a_slack_body_sent_again_under_a_fresh_timestamp_is_not_acted_on(admin_actor):
    connection = test_slack.connect(admin_actor)
    body = json.dumps(MESSAGE).encode()
    assert deliver_slack(connection, body).status_code == 202
    again = deliver_slack(connection, body)
    assert (again.status_code, again.json()) == (200, {"status": "already seen"})


def test_the_webhook_secret_is_sealed_and_rotates_with_the_credentials(github, admin_actor, settings):  # noqa: F811
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.BRAIN_CONNECTOR_KEYS = [old]
    connection = connect(admin_actor)
    secret = connection.webhook_secret
    assert len(secret) == 64
    stored = Connection.objects.filter(pk=connection.pk).values_list("sealed_webhook_secret", flat=True).get()
    assert secret not in stored
    assert unseal_secret(stored) == secret
    settings.BRAIN_CONNECTOR_KEYS = [new, old]
    call_command("rotate_connector_keys", stdout=StringIO())
    settings.BRAIN_CONNECTOR_KEYS = [new]
    connection.refresh_from_db()
    assert connection.webhook_secret == secret
    assert deliver(connection, "ping", {"zen": "Design for failure."}).json() == {"status": "noted"}
    settings.BRAIN_CONNECTOR_KEYS = [old]  # a secret no key opens verifies nothing, not even ""
    assert Connection.objects.get(pk=connection.pk).webhook_secret == ""
    assert deliver(connection, "ping", {"zen": "x"}, secret="").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_the_migration_seals_the_webhook_secrets_stored_in_the_clear(admin_actor):
    from django.db import connection as database
    from django.db.migrations.executor import MigrationExecutor

    from brain.models import Category

    before, after = [("connectors", "0002_slack_audiences")], [("connectors", "0003_sealed_webhook_secrets")]
    executor = MigrationExecutor(database)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("connectors", "Connection")
    category = Category.objects.get(org=admin_actor.org, slug=Category.DEFAULT_SLUG)
    old.objects.create(
        org_id=admin_actor.org.pk, kind="github", name="Old", category_id=category.pk, webhook_secret="a1" * 32
    )
    executor = MigrationExecutor(database)
    executor.migrate(after)
    stored = Connection.objects.get(name="Old")
    assert "a1" * 32 not in stored.sealed_webhook_secret
    assert stored.webhook_secret == "a1" * 32
