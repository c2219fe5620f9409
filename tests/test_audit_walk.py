"""A walk through every place that changes who can see or do what, or removes knowledge: each act
is done the way people do it (a page, the admin, a service an interface calls, a nightly purge),
and the walk checks that the trail holds its record. The acts are those the table in
docs/operations.md "Audit trail" lists, read from the table itself, so a row added there without a
step here fails this test."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db.models import Model
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import Application

from brain.core.accounts import reset_password
from brain.core.audit import purge_expired_audit, record_audit
from brain.core.invitations import answer_invitation, invite_member
from brain.core.services import create_token, revoke_token
from brain.models import AuditRecord, Category, Membership, OrganisationGroup
from brain.oauth.connections import connect_app, disconnect_app
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_org, make_user
from connectors.grants import grant_tool
from connectors.sync import add_connection, pause_connection, remove_connection, replace_credentials
from memory.documents.ingestion import pause_ingestion, resume_ingestion
from memory.documents.placement import change_document_access, delete_document
from memory.documents.trash import purge_due_trash, restore_document
from memory.graph.fixes import merge_entities, undo_merge
from memory.graph.memories import forget, remember
from memory.models import Chunk, Document, Entity, Fact, Mention, Scope
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

OPERATIONS = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
PASSWORD = "a long enough password 42"
# Written by acts whose tests need parts of their own, and check these records there: the export and
# import (tests/test_org_export.py), a restore (tests/test_backup_restore.py), and single sign-on
# through a real provider (brain/tests/test_sso.py, test_sso_admin.py).
WRITTEN_ELSEWHERE = {
    "organisation.exported",
    "organisation.imported",
    "instance.restored",
    "member.added",
    "member.role_changed",
    "member.groups_changed",
    "singlesignon.added",
    "singlesignon.changed",
}


def documented_actions() -> set[str]:
    """The actions in the first column of the Audit trail table (not the ``<model>.*`` row)."""
    text = OPERATIONS.read_text()
    section = text[text.index("### Audit trail") :]
    section = section[: section.index("\n### ", 5)]
    actions: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            actions |= {a for a in re.findall(r"`([^`]+)`", first) if not a.startswith("<")}
    return actions


def admin_form(page: Any) -> dict[str, Any]:
    """What an admin change page would post back unchanged: its form's and inlines' current values."""
    data: dict[str, Any] = {}
    forms = [page.context["adminform"].form]
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        management = formset.management_form
        for name in management.fields:
            data[management.add_prefix(name)] = management.initial.get(name, management[name].value())
        forms += formset.forms
    for form in forms:
        for name in form.fields:
            value = form[name].value()
            if isinstance(value, bool):
                if value:
                    data[form.add_prefix(name)] = "on"
            elif isinstance(value, list | tuple):
                data[form.add_prefix(name)] = [v.pk if isinstance(v, Model) else v for v in value]
            elif value is not None:
                data[form.add_prefix(name)] = value.pk if isinstance(value, Model) else value
    return data


def signed_in_client(user: User) -> Client:
    client = Client()
    assert client.post("/login/", {"username": user.get_username(), "password": PASSWORD}).status_code == 302
    return client


@pytest.fixture
def world(db: None) -> dict[str, Any]:
    org = make_org()
    admin = make_org_admin(org, username="ada")
    member = make_user(org, username="rosa")
    for user in (admin, member):
        user.set_password(PASSWORD)
        user.save()
    return {"org": org, "admin": admin, "member": member, "actor": make_actor(org, admin, via="web")}


def walk_people(world: dict[str, Any]) -> None:
    org, member = world["org"], world["member"]
    Client().post("/login/", {"username": "rosa", "password": "not it"})
    client = signed_in_client(member)
    client.post(
        "/account/",
        {
            "part": "password",
            "old_password": PASSWORD,
            "new_password1": PASSWORD + "!",
            "new_password2": PASSWORD + "!",
        },
    )
    client.post("/logout/")
    reset_password(user=member)
    issued = create_token(org=org, user=member, scopes=["read"], via="web")
    revoke_token(actor=make_actor(org, member, via="web"), token_id=issued.token.pk)
    application = Application.objects.create(
        name="Desk assistant",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:9/callback",
    )
    connected = connect_app(user=member, org=org, application=application, access="read")
    disconnect_app(user=member, connection_id=connected.pk)
    # An invitation to someone with an account elsewhere waits for their answer.
    elsewhere = make_user(make_org(), username="nina", email="nina@example.com")
    invite_member(actor=world["actor"], email="nina@example.com")
    offer = elsewhere.invitations.get(org=org)
    answer_invitation(user=elsewhere, invitation_id=str(offer.public_id), accept=True)
    other = make_user(make_org(), username="omar", email="omar@example.com")
    invite_member(actor=world["actor"], email="omar@example.com")
    answer_invitation(user=other, invitation_id=str(other.invitations.get(org=org).public_id), accept=False)
    invite_member(actor=world["actor"], email="omar@example.com")
    open_one = other.invitations.get(org=org, answer="open")
    withdrawn = logged_in(world["admin"]).post(
        "/admin/brain/membershipinvitation/", {"action": "withdraw", "_selected_action": [open_one.pk]}
    )
    assert withdrawn.status_code == 302


def walk_admin(world: dict[str, Any]) -> None:
    org, admin = world["org"], world["admin"]
    client = logged_in(admin)
    membership = Membership.objects.get(org=org, user=world["member"])
    change = f"/admin/brain/membership/{membership.pk}/change/"
    assert client.post(change, {"role": Membership.ADMIN, "user": membership.user_id}).status_code == 302
    # Any account may be made a member by an operator; an organisation admin invites instead.
    operator = logged_in(make_operator())
    newcomer = make_user(make_org(), username="lena")
    added = operator.post(
        "/admin/brain/membership/add/",
        {
            "org": org.pk,
            "user": newcomer.pk,
            "role": "member",
            "created_at_0": "2026-01-05",
            "created_at_1": "09:00:00",
        },
    )
    assert added.status_code == 302, added.context["adminform"].form.errors
    membership = Membership.objects.get(org=org, user=newcomer)
    assert operator.post(f"/admin/brain/membership/{membership.pk}/delete/", {"post": "yes"}).status_code == 302
    page = client.get(f"/admin/brain/organisation/{org.pk}/change/")
    form = admin_form(page) | {"features-0-jobs": "on", "audit_days": "90"}
    saved = client.post(f"/admin/brain/organisation/{org.pk}/change/", form)
    assert saved.status_code == 302, (
        saved.context["adminform"].form.errors,
        saved.context["inline_admin_formsets"][0].formset.errors,
    )
    group = Group.objects.create(name="Board")
    OrganisationGroup.objects.create(group=group, org=org)
    form = admin_form(operator.get(f"/admin/auth/group/{group.pk}/change/")) | {"name": "Board of directors"}
    assert operator.post(f"/admin/auth/group/{group.pk}/change/", form).status_code == 302
    pause_ingestion(actor=admin, org=org)
    resume_ingestion(actor=admin, org=org)


def walk_connections(world: dict[str, Any]) -> None:
    actor = world["actor"]
    category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
    connection = add_connection(
        actor=actor,
        kind="github",
        name="Code",
        category=category,
        credentials={"token": "ghp_not_a_real_one"},
        options={"repositories": "acme/kiosks"},
    )
    replace_credentials(actor=actor, connection_id=connection.pk, credentials={"token": "ghp_another"})
    pause_connection(actor=actor, connection_id=connection.pk, paused=True)
    pause_connection(actor=actor, connection_id=connection.pk, paused=False)
    grant_tool(actor=actor, connection_id=connection.pk, tool="github_comment", granted=True)
    grant_tool(actor=actor, connection_id=connection.pk, tool="github_comment", granted=False)
    remove_connection(actor=actor, connection_id=connection.pk, keep_documents=False)


def walk_knowledge(world: dict[str, Any]) -> None:
    actor, org = world["actor"], world["org"]
    moved = save(actor, "Board minutes", "The board approved the Duskwater kiosks.")
    board = Category.objects.create(org=org, slug="board", name="Board")
    change_document_access(actor=actor, document_id=moved.pk, category=board, scope=Scope.SHARED, owner=None)
    gone = save(actor, "Old plan", "The Duskwater kiosks cost 63,000 EUR.")
    delete_document(actor=actor, document_id=gone.pk)
    restore_document(actor=actor, document_id=gone.pk)
    delete_document(actor=actor, document_id=gone.pk)
    memory = remember(actor=actor, content="The Duskwater budget owner is Priya Shah.")
    forget(actor=actor, memory_id=memory.pk)
    long_ago = timezone.now() - timedelta(days=org.trash_days + 1)
    for model in (Document, Chunk, Fact):
        model.objects.filter(org=org, trashed_at__isnull=False).update(trashed_at=long_ago)
    purge_due_trash()
    kept, merged = Entity.objects.create(org=org, name="Duskwater"), Entity.objects.create(org=org, name="Dusk water")
    for entity in (kept, merged):  # named by a shared source, as the admin lists entities
        Mention.objects.create(entity=entity, document=moved, surface=entity.name)
    merge = merge_entities(actor=actor, kept_id=kept.pk, merged_id=merged.pk)
    undo_merge(actor=actor, merge_id=merge.pk)


def walk_the_trail(world: dict[str, Any]) -> None:
    org = world["org"]
    client = logged_in(world["admin"])
    assert client.post(f"/audit/{org.slug}/export/", {"format": "csv"}).status_code == 200
    old = record_audit(actor=None, org=org, action="tool.action", target="an old call")
    AuditRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=400))
    purge_expired_audit()


def test_every_act_the_operations_table_lists_writes_its_record(world):
    documented = documented_actions()
    assert {"user.signed_in", "audit.exported", "trash.purged"} <= documented  # the table was read

    walk_people(world)
    walk_admin(world)
    walk_connections(world)
    walk_knowledge(world)
    walk_the_trail(world)

    written = set(AuditRecord.objects.filter(org=world["org"]).values_list("action", flat=True))
    missing = sorted(documented - WRITTEN_ELSEWHERE - written)
    assert missing == [], f"documented but not written by the walk: {missing}"


def test_the_walk_records_the_switch_it_flipped_with_its_old_and_new_value(world):
    walk_admin(world)
    changed = AuditRecord.objects.get(org=world["org"], action="organisation.changed")
    assert changed.details["fields"]["features.jobs"] == {"from": False, "to": True}
    assert changed.details["fields"]["audit_days"] == {"from": 365, "to": 90}
    roles = AuditRecord.objects.get(org=world["org"], action="membership.changed")
    assert roles.details["fields"]["role"] == {"from": "member", "to": "admin"}
