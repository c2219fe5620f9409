"""The audit trail: who changed access or history, what and when; read-only in the admin."""

from dataclasses import replace

import pytest

from brain.core.audit import OPERATOR_AT_SHELL, record_audit
from brain.models import AuditRecord
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_token, make_user

pytestmark = pytest.mark.django_db


def test_it_records_who_acted_through_which_interface_with_which_token(org):
    issued = make_token(org)
    actor = replace(make_actor(org, issued.token.user), token=issued.token)
    record = record_audit(actor=actor, action="memory.replaced", target="mem_1", details={"by": "mem_2"})
    assert (record.org, record.user, record.who, record.via, record.token) == (
        org, actor.user, actor.user.username, "mcp", issued.token,
    )  # fmt: skip
    assert record.details == {"by": "mem_2"}


def test_a_request_user_without_an_actor_is_recorded_as_an_admin_write(org):
    admin = make_org_admin(org)
    record = record_audit(actor=admin, org=org, action="membership.role_changed", target="x")
    assert (record.user, record.via, record.who) == (admin, "admin", admin.username)


def test_the_command_line_is_an_operator_not_the_member_the_command_runs_as(org):
    member = make_actor(org, via="command")
    assert record_audit(actor=member, action="token.revoked", target="t").user is None
    record = record_audit(actor=None, org=org, action="ingestion.paused", target=org.slug)
    assert (record.user, record.who, record.via) == (None, OPERATOR_AT_SHELL, "command")


def test_it_needs_an_organisation_when_no_actor_is_given():
    with pytest.raises(ValueError, match="needs the organisation"):
        record_audit(actor=None, action="x", target="y")


def test_the_name_survives_the_users_deletion(org):
    user = make_user(org, username="leaving")
    record = record_audit(actor=make_actor(org, user), action="token.revoked", target="t")
    user.delete()
    record.refresh_from_db()
    assert record.user is None
    assert record.who == "leaving"


def test_an_org_admin_sees_only_their_organisations_records_and_cannot_change_them(org, other_org):
    mine = record_audit(actor=make_actor(org), action="token.revoked", target="mine")
    theirs = record_audit(actor=make_actor(other_org), action="token.revoked", target="theirs")
    client = logged_in(make_org_admin(org))
    page = client.get("/admin/brain/auditrecord/")
    assert page.status_code == 200
    assert "mine" in page.content.decode()
    assert "theirs" not in page.content.decode()
    assert client.get(f"/admin/brain/auditrecord/{theirs.pk}/change/").status_code == 302  # not found: back to list
    assert client.get(f"/admin/brain/auditrecord/{mine.pk}/change/").status_code == 200
    assert client.post(f"/admin/brain/auditrecord/{mine.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.post(f"/admin/brain/auditrecord/{mine.pk}/change/", {"target": "edited"}).status_code == 403
    assert AuditRecord.objects.get(pk=mine.pk).target == "mine"


def test_operators_see_every_organisations_records(org, other_org):
    record_audit(actor=make_actor(org), action="token.revoked", target="mine")
    record_audit(actor=make_actor(other_org), action="token.revoked", target="theirs")
    page = logged_in(make_operator()).get("/admin/brain/auditrecord/").content.decode()
    assert "mine" in page
    assert "theirs" in page
