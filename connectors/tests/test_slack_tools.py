"""The slack_* tools against the Slack stand-in: a caller reaches the public channels of connections
whose category they read and the private channels they are a member of; slack_post_message (an
ACTION) runs only where an admin granted it, and is in the audit log."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, visible_tools
from brain.models import AuditRecord, Organisation
from conftest import make_actor, make_org, make_user
from connectors import grants, sync
from connectors.tests.slack_server import slack_server
from connectors.tests.test_slack import connect, workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings):
    cache.clear()
    with slack_server() as fake:
        settings.BRAIN_SLACK_API_URL = fake.base
        workspace(fake)
        org = make_org()
        admin = make_actor(org, make_user(org, role="admin", email="admin@acme.example"))
        priya = make_actor(org, make_user(org, email="priya@acme.example"))
        sam = make_actor(org, make_user(org, email="sam@acme.example"))
        connection = connect(admin)
        assert sync.sync_connection(connection.pk).state == "synced"  # maps the private channel's members
        yield {"fake": fake, "org": org, "admin": admin, "priya": priya, "sam": sam, "connection": connection}


def call(actor, tool, **arguments):
    org = Organisation.objects.select_related("features").get(pk=actor.org.pk)
    return execute(make_actor(org, actor.user, scopes=",".join(sorted(actor.scopes))), TOOLS[tool], arguments)


def names(actor):
    org = Organisation.objects.select_related("features").get(pk=actor.org.pk)
    return {spec.name for spec in visible_tools(scopes=actor.scopes, features=org.features.enabled())}


def test_channels_reached_follow_the_private_channels_members(world):
    assert "slack_list_channels" in names(world["sam"])
    priya = call(world["priya"], "slack_list_channels").output
    assert sorted(c.name for c in priya.channels) == ["general", "launch-plans"]
    sam = call(world["sam"], "slack_list_channels").output
    assert [c.name for c in sam.channels] == ["general"]
    assert "#general" in sam.to_text()
    assert "launch-plans" not in sam.to_text()


def test_post_is_an_action_off_until_granted_and_only_where_the_caller_reads(world):
    fake, sam, priya = world["fake"], world["sam"], world["priya"]
    assert "slack_post_message" not in names(sam)
    refused = call(sam, "slack_post_message", channel="#general", text="Deploy done")
    assert refused.code == "permission_denied"
    assert "granted" in refused.message

    grants.grant_tool(
        actor=world["admin"], connection_id=world["connection"].pk, tool="slack_post_message", granted=True
    )
    assert "slack_post_message" in names(sam)
    hidden = call(sam, "slack_post_message", channel="launch-plans", text="Is it 1 December?")
    assert hidden.code == "not_found"
    assert hidden.message.endswith("The ones you can reach are: #general.")
    posted = call(priya, "slack_post_message", channel="#launch-plans", text="Date confirmed")
    assert posted.output is not None, posted.message
    said = fake.channels["GSECRET01"]["messages"][-1]["text"]
    assert said.startswith("Date confirmed\n")
    assert priya.user.username in said
    made = call(sam, "slack_post_message", channel="general", text="Deploy done")
    assert made.output.channel == "general"
    actions = AuditRecord.objects.filter(org=world["org"], action="tool.action").order_by("pk")
    assert [(r.target, r.details["outcome"]) for r in actions] == [
        ("slack_post_message", "not_found"), ("slack_post_message", "done"), ("slack_post_message", "done")
    ]  # fmt: skip


def test_post_refuses_a_malformed_channel_or_thread(world):
    grants.grant_tool(
        actor=world["admin"], connection_id=world["connection"].pk, tool="slack_post_message", granted=True
    )
    assert call(world["sam"], "slack_post_message", channel="no such!", text="x").code == "invalid_argument"
    bad = call(world["sam"], "slack_post_message", channel="general", text="x", thread_ts="tomorrow")
    assert bad.code == "invalid_argument"


def test_a_revoked_token_is_a_refusal_in_words(world):
    world["fake"].token = "xoxb-other"
    refused = call(world["sam"], "slack_list_channels")
    assert refused.code == "permission_denied"
    assert "refused" in refused.message


def test_read_channel_reads_what_the_caller_reaches(world):
    from connectors.tests.slack_server import ts_at

    sam, priya = world["sam"], world["priya"]
    general = call(sam, "slack_read_channel", channel="#general").output
    assert [m.text for m in general.messages][:2] == ["Who owns the billing migration?", "Lunch at noon"]
    assert general.messages[0].who == "Priya Shah"
    assert general.messages[0].replies == 1
    thread = call(sam, "slack_read_channel", channel="general", thread_ts=general.messages[0].ts).output
    assert [m.who for m in thread.messages] == ["Priya Shah", "Sam Berg"]
    assert "I do, @Priya Shah" in thread.to_text()
    hidden = call(sam, "slack_read_channel", channel="launch-plans")
    assert hidden.code == "not_found"
    assert "Launch date" not in hidden.message
    secret = call(priya, "slack_read_channel", channel="launch-plans", limit=500).output
    assert [m.text for m in secret.messages] == ["Launch date is 1 December, keep it quiet"]
    missing = call(sam, "slack_read_channel", channel="general", thread_ts=ts_at("2026-11-09T09:00"))
    assert missing.code == "not_found"
