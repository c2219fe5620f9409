"""Syncing GitHub against a stand-in on loopback: issues and pull requests in, by their own ids;
unchanged items skipped, edits as new versions; a sync stopped mid-listing goes on from its last
page without duplicates or gaps; refused tokens and rate limits kept in words; one sync of a
connection at a time; credentials encrypted with rotatable keys."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.models import Category
from conftest import make_actor, make_org, make_user
from connectors import sync
from connectors.models import Connection, SyncedItem
from connectors.sealing import CredentialsUnreadable, unseal
from memory.models import Document

pytestmark = pytest.mark.django_db


def connect(actor, token="ghp_valid", repos="acme/api"):  # noqa: S107 (the stand-in's token)
    category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
    return sync.add_connection(
        actor=actor,
        kind="github",
        name=f"GitHub {repos}",
        category=category,
        credentials={"token": token},
        options={"repositories": repos},
    )


def documents(connection):
    return Document.objects.filter(org=connection.org, source_kind="connector")


def test_issues_and_pull_requests_come_in_once_and_edits_as_versions(github, admin_actor):
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z", comments=1, body="The login page 500s")
    github.add_issue("acme/api", 2, updated="2026-11-03T10:00:00Z", pull=True, title="Fix the login page")
    github.comments[("acme/api", 1)] = [
        {"user": {"login": "sam"}, "created_at": "2026-11-02T11:00:00Z", "body": "Seen on staging too"}
    ]
    connection = connect(admin_actor)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved) == ("synced", 2)
    issue = documents(connection).get(metadata__number=1)
    assert issue.title == "Issue acme/api#1: Item 1"
    assert "Seen on staging too" in issue.content
    assert "The login page 500s" in issue.content
    assert issue.source_url == "https://github.example/acme/api/issues/1"
    assert documents(connection).get(metadata__number=2).metadata["kind"] == "pull_request"
    connection.refresh_from_db()
    assert connection.items == 2
    assert connection.last_sync_at is not None
    assert connection.last_error == ""
    assert connection.cursor["acme/api"]["since"] == "2026-11-03T10:00:00Z"

    assert sync.sync_connection(connection.pk).saved == 0  # nothing changed: nothing saved
    github.add_issue("acme/api", 1, updated="2026-11-04T09:00:00Z", body="The login page 500s for SSO users")
    assert sync.sync_connection(connection.pk).saved == 1
    assert documents(connection).filter(metadata__number=1).count() == 2  # the edit is a new version
    assert SyncedItem.objects.filter(connection=connection).count() == 2


def test_a_sync_stopped_mid_listing_goes_on_from_its_last_page(github, admin_actor):
    for n in range(1, 121):
        github.add_issue("acme/api", n, updated=f"2026-11-{1 + n // 10:02d}T{n % 10:02d}:00:00Z")
    github.fail_on_page = 3
    connection = connect(admin_actor)
    stopped = sync.sync_connection(connection.pk)
    assert stopped.state == "failed"
    assert stopped.saved == 100
    connection.refresh_from_db()
    assert "HTTP 500" in connection.last_error
    assert not connection.credentials_refused
    assert "page=3" in connection.cursor["acme/api"]["next"]
    github.requests.clear()
    resumed = sync.sync_connection(connection.pk)
    assert resumed.state == "synced"
    assert resumed.saved == 20
    listings = [path for path in github.requests if "/issues" in path]
    assert "page=3" in listings[0]  # went on from the page it stopped at
    assert documents(connection).count() == 120
    assert SyncedItem.objects.filter(connection=connection).count() == 120


def test_a_refused_token_is_an_error_in_words_and_stops_the_retries(github, admin_actor):
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    connection = connect(admin_actor, token="ghp_revoked")
    outcome = sync.sync_connection(connection.pk)
    assert outcome.state == "failed"
    connection.refresh_from_db()
    assert connection.credentials_refused
    assert "GitHub refused the token (401)" in connection.last_error
    assert connection.state == "failing"
    assert connection.pk not in sync.due_connections()
    sync.replace_credentials(actor=admin_actor, connection_id=connection.pk, credentials={"token": "ghp_valid"})
    assert connection.pk in sync.due_connections()
    assert sync.sync_connection(connection.pk).saved == 1


def test_an_unknown_repository_is_named(github, admin_actor):
    connection = connect(admin_actor, repos="acme/nope")
    sync.sync_connection(connection.pk)
    connection.refresh_from_db()
    assert "404 for acme/nope" in connection.last_error


@pytest.mark.parametrize(
    ("status", "headers"),
    [(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "REPLACE"}), (429, {"Retry-After": "120"})],
    ids=["primary", "secondary"],
)
def test_rate_limits_move_the_next_sync_to_when_github_says(github, admin_actor, status, headers):
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    reset = timezone.now() + timedelta(minutes=30)
    if headers.get("x-ratelimit-reset") == "REPLACE":
        headers = {**headers, "x-ratelimit-reset": str(int(reset.timestamp()))}
    github.refusals.append((status, headers))
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert not connection.credentials_refused
    expected = reset if status == 403 else timezone.now() + timedelta(seconds=120)
    assert abs((connection.next_sync_at - expected).total_seconds()) < 5
    assert "asked Brain to wait" in connection.last_error


def test_one_sync_of_a_connection_at_a_time(github, admin_actor):
    connection = connect(admin_actor)
    Connection.objects.filter(pk=connection.pk).update(lease_until=timezone.now() + timedelta(minutes=5))
    assert sync.sync_connection(connection.pk).state == "busy"
    assert connection.pk not in sync.due_connections()
    # A lease past its time belongs to a worker that died: the next sync takes over.
    Connection.objects.filter(pk=connection.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    assert sync.sync_connection(connection.pk).state == "synced"


def test_a_sync_asked_for_while_one_runs_is_due_at_once_after_it(github, admin_actor, monkeypatch):
    """A webhook that finds the connection's sync running asks for another; the running one may
    not read that change, so the next sync is due at once, not after the interval."""
    connection = connect(admin_actor)
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    real_pages = sync.KINDS["github"].pages

    def pages_with_a_webhook_meanwhile(self, cursor):
        for page in real_pages(self, cursor):
            sync.sync_soon(actor=admin_actor, connection_id=connection.pk)  # as a webhook's _sync_now does
            yield page

    monkeypatch.setattr(sync.KINDS["github"], "pages", pages_with_a_webhook_meanwhile)
    assert sync.sync_connection(connection.pk).state == "synced"
    assert connection.pk in sync.due_connections()
    monkeypatch.undo()
    assert sync.sync_connection(connection.pk).state == "synced"  # nothing asked meanwhile: the interval
    connection.refresh_from_db()
    assert connection.next_sync_at > timezone.now() + timedelta(minutes=10)
    assert connection.pk not in sync.due_connections()


def test_a_busy_sync_task_asks_again_shortly(github, admin_actor, monkeypatch):
    from celery.exceptions import Retry

    from connectors.tasks import sync_connection_task

    connection = connect(admin_actor)
    Connection.objects.filter(pk=connection.pk).update(lease_until=timezone.now() + timedelta(minutes=5))
    with pytest.raises(Retry):
        sync_connection_task.apply(args=[connection.pk], throw=True)


def test_credentials_are_sealed_and_keys_rotate(github, admin_actor, settings):
    connection = connect(admin_actor, token="ghp_valid")
    assert "ghp_valid" not in connection.sealed_credentials
    assert unseal(connection.sealed_credentials) == {"token": "ghp_valid"}
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.BRAIN_CONNECTOR_KEYS = [old]
    sync.replace_credentials(actor=admin_actor, connection_id=connection.pk, credentials={"token": "ghp_valid"})
    settings.BRAIN_CONNECTOR_KEYS = [new, old]
    call_command("rotate_connector_keys", stdout=StringIO())
    settings.BRAIN_CONNECTOR_KEYS = [new]
    connection.refresh_from_db()
    assert unseal(connection.sealed_credentials) == {"token": "ghp_valid"}
    settings.BRAIN_CONNECTOR_KEYS = [old]
    with pytest.raises(CredentialsUnreadable):
        unseal(connection.sealed_credentials)
    # A connection whose credentials no key opens says so in words and waits for new ones.
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert "cannot be read" in connection.last_error
    assert connection.credentials_refused


def test_removing_a_connection_keeps_or_deletes_what_it_brought_in(github, admin_actor):
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    kept = connect(admin_actor)
    sync.sync_connection(kept.pk)
    assert sync.remove_connection(actor=admin_actor, connection_id=kept.pk, keep_documents=True) == 0
    assert Document.objects.filter(source_kind="connector").count() == 1
    Document.objects.all().delete()
    dropped = connect(admin_actor)
    sync.sync_connection(dropped.pk)
    assert sync.remove_connection(actor=admin_actor, connection_id=dropped.pk, keep_documents=False) == 1
    assert not Document.objects.filter(source_kind="connector").exists()


def test_only_admins_manage_connections(github):
    org = make_org()
    member = make_actor(org, make_user(org))
    with pytest.raises(Exception, match="Only an admin"):
        connect(member)


def test_the_beat_sweep_queues_due_connections_only(github, admin_actor, monkeypatch):
    from connectors import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.sync_connection_task, "delay", queued.append)
    due = connect(admin_actor)
    later = connect(admin_actor, repos="acme/web")
    Connection.objects.filter(pk=later.pk).update(next_sync_at=timezone.now() + timedelta(minutes=10))
    paused = connect(admin_actor, repos="acme/ops")
    sync.pause_connection(actor=admin_actor, connection_id=paused.pk, paused=True)
    assert tasks.sync_due_connections_task() == 1
    assert queued == [due.pk]


def test_a_private_repository_never_lands_where_every_member_reads(github, admin_actor):
    github.add_issue("acme/secret", 1, updated="2026-11-02T10:00:00Z")
    github.private.add("acme/secret")
    open_connection = connect(admin_actor, repos="acme/secret")
    assert sync.sync_connection(open_connection.pk).state == "failed"
    open_connection.refresh_from_db()
    assert "acme/secret is private on GitHub" in open_connection.last_error
    assert open_connection.credentials_refused
    assert not documents(open_connection).exists()
    team = Category.objects.create(org=admin_actor.org, slug="platform", name="Platform team", restricted=True)
    people = Group.objects.create(name="platform people")
    team.groups.add(people)
    with pytest.raises(InvalidArgument, match="restricted to groups you are not in"):
        sync.add_connection(
            actor=admin_actor,
            kind="github",
            name="Secret",
            category=team,
            credentials={"token": "ghp_valid"},
            options={"repositories": "acme/secret"},
        )
    admin_actor.user.groups.add(people)
    cache.clear()  # the categories a person reads are worked out once per request
    kept = sync.add_connection(
        actor=admin_actor,
        kind="github",
        name="Secret, restricted",
        category=team,
        credentials={"token": "ghp_valid"},
        options={"repositories": "acme/secret"},
    )
    assert sync.sync_connection(kept.pk).saved == 1
    assert documents(kept).get().category == team


def test_an_item_put_in_the_trash_stays_there_when_the_source_edits_it(github, admin_actor):
    from memory.documents.placement import delete_document
    from memory.documents.trash import restore_document

    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z", body="The login page 500s")
    connection = connect(admin_actor)
    sync.sync_connection(connection.pk)
    issue = documents(connection).get()
    delete_document(actor=admin_actor, document_id=issue.pk)
    github.add_issue("acme/api", 1, updated="2026-11-04T09:00:00Z", body="The login page 500s for SSO users")
    assert sync.sync_connection(connection.pk).saved == 0
    assert list(documents(connection).values_list("pk", flat=True)) == [issue.pk]  # no second copy beside it
    assert documents(connection).get().trashed_at is not None
    # Restored, it takes the source's next edit as a new version.
    restore_document(actor=admin_actor, document_id=issue.pk)
    github.add_issue("acme/api", 1, updated="2026-11-05T09:00:00Z", body="Fixed for SSO users")
    assert sync.sync_connection(connection.pk).saved == 1
    assert documents(connection).filter(trashed_at__isnull=True).count() == 2
