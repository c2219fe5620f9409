"""Syncing Slack against a stand-in on loopback: threads and days of public and private channels;
a sync stopped mid-listing goes on without duplicates or gaps; edits as versions, deletions
withdrawn; refused tokens and rate limits in words; a private channel read only by its members
in Brain, kept so on every sync; the Events API webhook's checks."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from brain.core.errors import NotFound
from brain.models import Category
from conftest import make_actor, make_org, make_user
from connectors import slack, sync
from connectors.models import Connection, Recheck, SourceAudience, SyncedItem
from connectors.sealing import unseal
from connectors.tests.slack_server import FakeSlack, slack_server, ts_at
from memory.documents.selectors import get_document, list_documents
from memory.models import Document

pytestmark = pytest.mark.django_db
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # noqa: S105 (the stand-in's signing secret)


@pytest.fixture
def fake(settings):
    with slack_server() as server:
        settings.BRAIN_SLACK_API_URL = server.base
        yield server


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
def org():
    return make_org()


@pytest.fixture
def admin(org):
    return make_actor(org, make_user(org, role="admin", email="admin@acme.example"))


def connect(actor, token="xoxb-valid", channels=""):  # noqa: S107 (the stand-in's token)
    category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
    return sync.add_connection(
        actor=actor,
        kind="slack",
        name=f"Slack {channels or 'all'}",
        category=category,
        credentials={"token": token, "signing_secret": SECRET},
        options={"channels": channels},
    )


def documents(connection):
    """The latest version of each item brought in (an older one is superseded once the new is ingested)."""
    latest = SyncedItem.objects.filter(connection=connection, withdrawn_at__isnull=True).values("document")
    return Document.objects.filter(pk__in=latest)


def workspace(fake: FakeSlack) -> None:
    fake.add_user("UPRIYA", "Priya Shah", "priya@acme.example")
    fake.add_user("USAM", "Sam Berg", "Sam@Acme.example")
    fake.add_user("ULEA", "Lea Roth", "lea@elsewhere.example")  # not in Brain
    fake.add_channel("CGENERAL1", "general", members=["UPRIYA", "USAM", "ULEA"])
    fake.add_channel("GSECRET01", "launch-plans", private=True, members=["UPRIYA", "ULEA"])
    fake.add_channel("CRANDOM01", "random")  # the app is not in it
    fake.channels["CRANDOM01"]["members"].remove("UBOT0001")
    parent = fake.post("CGENERAL1", ts_at("2026-11-02T09:00"), "UPRIYA", "Who owns the billing migration?")
    fake.post("CGENERAL1", ts_at("2026-11-02T09:05"), "USAM", "I do, <@UPRIYA>; done by Friday", thread_ts=parent["ts"])
    fake.post("CGENERAL1", ts_at("2026-11-02T10:00"), "USAM", "Lunch at noon")
    fake.post("CGENERAL1", ts_at("2026-11-02T11:00"), "ULEA", "Deploy window is 14:00")
    fake.post("CGENERAL1", ts_at("2026-11-03T08:00"), "UPRIYA", "Standup moved to 9:30")
    fake.post("GSECRET01", ts_at("2026-11-03T12:00"), "UPRIYA", "Launch date is 1 December, keep it quiet")


def test_threads_and_days_of_public_and_private_channels_come_in(fake, org, admin):
    workspace(fake)
    priya = make_actor(org, make_user(org, email="Priya@acme.example"))
    sam = make_actor(org, make_user(org, email="sam@acme.example"))
    connection = connect(admin)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved) == ("synced", 4)
    thread = documents(connection).get(metadata__kind="thread")
    assert thread.title == "#general thread 2026-11-02: Who owns the billing migration?"
    assert "**Priya Shah** (2026-11-02 09:00): Who owns the billing migration?" in thread.content
    assert "**Sam Berg** (2026-11-02 09:05): I do, @Priya Shah; done by Friday" in thread.content
    assert thread.occurred_at.isoformat() == "2026-11-02T09:00:00+00:00"  # the message's time, not the sync's
    assert thread.conversation == "slack:general"
    link = "https://acme.slack.example/archives/CGENERAL1/p" + ts_at("2026-11-02T09:00").replace(".", "")
    assert thread.source_url == link
    day = documents(connection).get(title="#general 2026-11-02")
    assert day.content == "**Sam Berg** (10:00): Lunch at noon\n\n**Lea Roth** (11:00): Deploy window is 14:00"
    assert day.metadata["speakers"] == ["Sam Berg", "Lea Roth"]
    secret = documents(connection).get(metadata__channel="launch-plans")
    assert secret.category.restricted
    assert secret.category != connection.category
    # Readers are the channel's members in Brain: Priya reads it, Sam (not a member) and the admin
    # who added the connection do not; Lea is not in Brain and is skipped.
    assert get_document(actor=priya, document_id=secret.pk) == secret
    for outsider in (sam, admin):
        with pytest.raises(NotFound):
            get_document(actor=outsider, document_id=secret.pk)
    assert secret not in list_documents(actor=admin)
    assert set(documents(connection).filter(metadata__private=False)) <= set(list_documents(actor=sam))
    audience = SourceAudience.objects.get(connection=connection)
    assert list(audience.group.user_set.all()) == [priya.user]
    assert not any(channel == "CRANDOM01" for _, args in fake.calls for channel in [args.get("channel")])
    assert sync.sync_connection(connection.pk).saved == 0  # nothing changed: nothing saved


def test_a_member_removed_from_a_private_channel_loses_access_at_the_next_sync(fake, org, admin):
    workspace(fake)
    priya = make_actor(org, make_user(org, email="priya@acme.example"))
    sam = make_actor(org, make_user(org, email="sam@acme.example"))
    connection = connect(admin, channels="launch-plans")
    sync.sync_connection(connection.pk)
    secret = documents(connection).get()
    fake.channels["GSECRET01"]["members"] = ["UBOT0001", "USAM"]
    assert sync.sync_connection(connection.pk).state == "synced"
    with pytest.raises(NotFound):
        get_document(actor=priya, document_id=secret.pk)
    assert get_document(actor=sam, document_id=secret.pk) == secret


def test_an_account_given_a_members_address_does_not_inherit_their_channels(fake, org, admin):
    """A second account with a private channel member's address (an admin's invitation, a typo)
    makes the address ambiguous: neither account is mapped until only one carries it."""
    workspace(fake)
    priya = make_actor(org, make_user(org, email="priya@acme.example"))
    impostor = make_actor(org, make_user(org, email="PRIYA@acme.example"))
    connection = connect(admin, channels="launch-plans")
    assert sync.sync_connection(connection.pk).state == "synced"
    secret = documents(connection).get()
    for reader in (priya, impostor):
        with pytest.raises(NotFound):
            get_document(actor=reader, document_id=secret.pk)
    impostor.user.delete()
    assert sync.sync_connection(connection.pk).state == "synced"
    assert get_document(actor=priya, document_id=secret.pk) == secret


def test_a_sync_stopped_mid_listing_goes_on_without_duplicates_or_gaps(fake, admin, monkeypatch):
    monkeypatch.setattr(slack, "PER_PAGE", 4)
    fake.add_user("USAM", "Sam Berg", "sam@acme.example")
    fake.add_channel("CGENERAL1", "general")
    for day in range(1, 8):  # seven days, three loose messages a day and a thread every other day
        for hour in (9, 10, 11):
            fake.post("CGENERAL1", ts_at(f"2026-11-{day:02d}T{hour:02d}:00"), "USAM", f"Note {day}-{hour}")
        if day % 2:
            parent = fake.post("CGENERAL1", ts_at(f"2026-11-{day:02d}T15:00"), "USAM", f"Question {day}")
            fake.post("CGENERAL1", ts_at(f"2026-11-{day:02d}T15:30"), "USAM", f"Answer {day}", thread_ts=parent["ts"])
    fake.fail_history_call = 3
    connection = connect(admin)
    stopped = sync.sync_connection(connection.pk)
    assert stopped.state == "failed"
    connection.refresh_from_db()
    assert "internal_error" in connection.last_error
    assert not connection.credentials_refused
    listing = connection.cursor["channels"]["CGENERAL1"]["listing"]
    assert listing["next"]  # Slack's next_cursor, kept to go on from
    before = stopped.saved
    assert 0 < before < 11
    fake.calls.clear()
    resumed = sync.sync_connection(connection.pk)
    assert resumed.state == "synced"
    history = [args for method, args in fake.calls if method == "conversations.history"]
    assert history[0].get("cursor") == listing["next"]  # went on from where it stopped
    assert before + resumed.saved == 11  # seven days and four threads, each once
    days = documents(connection).filter(metadata__kind="day")
    assert days.count() == 7
    for day in days:
        assert day.metadata["messages"] == 3, day.title  # no day lost a message across the stop
    assert documents(connection).filter(metadata__kind="thread").count() == 4
    assert Document.objects.filter(org=connection.org, source_kind="connector").count() == 11


def test_an_edit_is_a_new_version_and_a_deleted_thread_is_withdrawn(fake, admin):
    workspace(fake)
    connection = connect(admin, channels="general")
    sync.sync_connection(connection.pk)
    fake.edit("CGENERAL1", ts_at("2026-11-03T08:00"), "Standup moved to 10:00", at=ts_at("2026-11-03T08:10"))
    assert sync.sync_connection(connection.pk).saved == 1
    day = documents(connection).get(title="#general 2026-11-03")
    assert day.version == 2
    assert "Standup moved to 10:00 (edited)" in day.content
    # The thread's parent and reply are deleted: the whole thread is gone in Slack.
    parent = ts_at("2026-11-02T09:00")
    fake.delete("CGENERAL1", parent)
    fake.delete("CGENERAL1", ts_at("2026-11-02T09:05"))
    outcome = sync.sync_connection(connection.pk)
    assert outcome.withdrawn == 1
    assert not Document.objects.filter(external_id__endswith=f"CGENERAL1/{parent}").exists()
    assert SyncedItem.objects.get(connection=connection, source_id=f"CGENERAL1/{parent}").withdrawn_at is not None


def test_a_refused_token_is_an_error_in_words_and_stops_the_retries(fake, admin):
    workspace(fake)
    fake.revoked.add("xoxb-old")
    connection = connect(admin, token="xoxb-old")
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert connection.credentials_refused
    assert "Slack refused the bot token (token_revoked)" in connection.last_error
    assert "Replace credentials" in connection.last_error
    assert connection.pk not in sync.due_connections()
    sync.replace_credentials(
        actor=admin, connection_id=connection.pk, credentials={"token": "xoxb-valid", "signing_secret": SECRET}
    )
    assert connection.pk in sync.due_connections()
    assert sync.sync_connection(connection.pk).state == "synced"


def test_a_channel_the_app_is_not_in_is_named(fake, admin):
    workspace(fake)
    connection = connect(admin, channels="random")
    sync.sync_connection(connection.pk)
    connection.refresh_from_db()
    assert "The app is not a member of #random" in connection.last_error


def test_a_rate_limit_moves_the_next_sync_to_when_slack_says(fake, admin):
    workspace(fake)
    connection = connect(admin)
    fake.refusals.append((429, {"Retry-After": "120"}, {"ok": False, "error": "ratelimited"}))
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert not connection.credentials_refused
    assert "Slack asked Brain to wait" in connection.last_error
    expected = timezone.now() + timedelta(seconds=120)
    assert abs((connection.next_sync_at - expected).total_seconds()) < 5
    assert len(fake.calls) == 1  # the client did not retry by itself


def test_a_message_can_be_posted_as_the_app(fake):
    workspace(fake)
    ts = slack.post_message(token="xoxb-valid", channel="CGENERAL1", text="Noted, thanks")  # noqa: S106
    assert fake.channels["CGENERAL1"]["messages"][-1] == {"type": "message", "ts": ts, "user": "UBOT0001",
                                                          "text": "Noted, thanks"}  # fmt: skip
    with pytest.raises(slack.SourceError, match="channel_not_found"):
        slack.post_message(token="xoxb-valid", channel="CNOPE0001", text="hello")  # noqa: S106


def test_options_are_checked():
    assert slack.Slack.clean_options({"channels": "#General\nC0123ABCD\n\n"}) == {"channels": ["general", "C0123ABCD"]}
    assert slack.Slack.clean_options({"channels": ""}) == {"channels": []}
    with pytest.raises(ValueError, match="not a Slack channel name"):
        slack.Slack.clean_options({"channels": "two words"})


# The Events API webhook


def deliver(connection, payload, *, secret=SECRET, stamp=None):
    body = json.dumps(payload).encode()
    stamp = str(int(time.time()) if stamp is None else stamp)
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return Client().post(
        f"/connectors/hooks/slack/{connection.pk}/",
        body,
        content_type="application/json",
        headers={"X-Slack-Signature": signature, "X-Slack-Request-Timestamp": stamp},
    )


def message_event(event_id, **event):
    return {"type": "event_callback", "event_id": event_id, "event": {"type": "message", **event}}


def test_the_webhook_answers_url_verification_and_refuses_bad_stale_and_repeated_requests(fake, admin):
    connection = connect(admin)
    challenge = {"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
    assert deliver(connection, challenge).json() == {"challenge": challenge["challenge"]}
    assert deliver(connection, challenge, secret="not the secret").status_code == 401
    stale = deliver(connection, challenge, stamp=int(time.time()) - 6 * 60)
    assert stale.status_code == 401
    assert "older than five minutes" in stale.json()["error"]
    event = message_event("Ev01", channel="CGENERAL1", ts=ts_at("2026-11-04T09:00"), user="USAM", text="hi")
    assert deliver(connection, event).status_code == 202
    assert deliver(connection, event).json() == {"status": "already seen"}
    unsigned = Client().post(f"/connectors/hooks/slack/{connection.pk}/", b"{}", content_type="application/json")
    assert unsigned.status_code == 401


def test_a_message_event_queues_a_sync_now(fake, admin, monkeypatch):
    queued: list[int] = []

    def send_task(name, args, **kw):
        if name == "connectors.tasks.sync_connection_task":
            queued.append(args[0])

    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", send_task)
    connection = connect(admin)
    Connection.objects.filter(pk=connection.pk).update(next_sync_at=None)
    event = message_event("Ev02", channel="CGENERAL1", ts=ts_at("2026-11-04T09:00"), user="USAM", text="hi")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("django.db.transaction.on_commit", lambda fn, **kw: fn())
        assert deliver(connection, event).json() == {"status": "queued"}
    assert queued == [connection.pk]
    connection.refresh_from_db()
    assert connection.next_sync_at is not None


def test_a_reply_to_an_old_thread_is_read_again_at_the_next_sync(fake, admin):
    workspace(fake)
    connection = connect(admin, channels="general")
    sync.sync_connection(connection.pk)
    fake.post("CGENERAL1", ts_at("2026-11-20T09:00"), "USAM", "Something new")  # moves the window past 2 Nov
    sync.sync_connection(connection.pk)
    parent = ts_at("2026-11-02T09:00")
    late = fake.post("CGENERAL1", ts_at("2026-11-20T10:00"), "UPRIYA", "Is it done?", thread_ts=parent)
    event = message_event("Ev03", channel="CGENERAL1", ts=late["ts"], thread_ts=parent, user="UPRIYA", text="x")
    deliver(connection, event)
    assert Recheck.objects.filter(connection=connection).count() == 1
    assert sync.sync_connection(connection.pk).saved == 1
    assert "Is it done?" in documents(connection).get(metadata__kind="thread").content
    assert not Recheck.objects.filter(connection=connection).exists()


def test_a_deleted_message_is_withdrawn_at_once_and_the_rest_comes_back_without_it(fake, admin):
    workspace(fake)
    connection = connect(admin, channels="general")
    sync.sync_connection(connection.pk)
    lunch = ts_at("2026-11-02T10:00")
    fake.delete("CGENERAL1", lunch)
    previous = {"type": "message", "ts": lunch, "user": "USAM", "text": "Lunch at noon"}
    event = message_event(
        "Ev04", subtype="message_deleted", channel="CGENERAL1", deleted_ts=lunch, previous_message=previous
    )
    assert deliver(connection, event).json() == {"status": "withdrawn"}
    assert not documents(connection).filter(title="#general 2026-11-02").exists()
    sync.sync_connection(connection.pk)
    day = Document.objects.get(org=connection.org, title="#general 2026-11-02")  # the only version left
    assert day.content == "**Lea Roth** (11:00): Deploy window is 14:00"
    assert day.version == 1


def test_an_admin_adds_a_slack_connection_on_the_page_and_sees_what_to_paste_in_slack(org):
    client = Client()
    client.force_login(make_user(org, role="admin"))
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    form = {"org": org.pk, "kind": "slack", "name": "Slack: company", "category": category.pk,
            "slack-credential_token": "xoxb-page", "slack-credential_signing_secret": "page-secret",
            "slack-option_channels": "#general\n#launch-plans",
            "github-credential_token": "not this one", "github-option_repositories": "acme/api"}  # fmt: skip
    assert client.post("/connectors/", form).status_code == 302
    connection = Connection.objects.get(org=org)
    assert connection.options == {"channels": ["general", "launch-plans"]}
    assert unseal(connection.sealed_credentials) == {"token": "xoxb-page", "signing_secret": "page-secret"}
    page = client.get("/connectors/").content.decode()
    assert f"/connectors/hooks/slack/{connection.pk}/" in page
    assert "message.groups" in page
    assert 'name="credential_signing_secret"' in page  # replacing asks for both
    assert "xoxb-page" not in page
    assert "page-secret" not in page


def test_removing_the_connection_with_its_documents_removes_the_private_channels_categories(fake, admin):
    workspace(fake)
    connection = connect(admin, channels="launch-plans")
    sync.sync_connection(connection.pk)
    audience = SourceAudience.objects.get(connection=connection)
    category, group = audience.category.pk, audience.group.pk
    assert sync.remove_connection(actor=admin, connection_id=connection.pk, keep_documents=False) == 1
    assert not Category.objects.filter(pk=category).exists()
    assert not Group.objects.filter(pk=group).exists()
