"""The admin across organisations: choices, crafted forms, moves and tokens, as an org admin would post them."""

import pytest
from django.contrib.auth.models import Group

from brain.core.services import record_tool_call
from brain.models import ApiToken, AuditRecord, Category, Membership, OrganisationGroup, ToolCall
from brain.tests.admin_client import logged_in, make_operator, make_org_admin, options
from conftest import make_actor, make_token, make_user
from contacts.models import Contact

pytestmark = pytest.mark.django_db


def group_of(org, name):
    group = Group.objects.create(name=name)
    OrganisationGroup.objects.create(group=group, org=org)
    return group


def category_form(org, **fields):
    return {"org": org.pk, "slug": "board", "name": "Board", "restricted": "on", **fields}


def contact_form(org, **fields):
    return {"org": org.pk, "name": "Farah", "topics": "invoices", "email": "f@example.com", "slack": "",
            "phone": "", "channels": "email", "active": "on", **fields}  # fmt: skip


def test_add_forms_offer_only_the_admins_organisations_users_groups_and_organisations(org, other_org):
    member, outsider = make_user(org), make_user(other_org)
    mine, theirs = group_of(org, "board"), group_of(other_org, "their-board")
    client = logged_in(make_org_admin(org))
    category_page = client.get("/admin/brain/category/add/")
    assert options(category_page, "groups") == {str(mine.pk)}
    assert options(category_page, "org") == {str(org.pk)}
    contact_users = options(client.get("/admin/contacts/contact/add/"), "user")
    assert str(member.pk) in contact_users
    assert str(outsider.pk) not in contact_users
    membership_users = options(client.get("/admin/brain/membership/add/"), "user")
    assert str(outsider.pk) not in membership_users
    assert theirs.name not in category_page.content.decode()


def test_operators_are_offered_everything(org, other_org):
    outsider = make_user(other_org)
    theirs = group_of(other_org, "their-board")
    client = logged_in(make_operator())
    assert str(theirs.pk) in options(client.get("/admin/brain/category/add/"), "groups")
    assert str(outsider.pk) in options(client.get("/admin/contacts/contact/add/"), "user")


def test_a_crafted_group_of_another_organisation_is_a_form_error(org, other_org):
    theirs = group_of(other_org, "their-board")
    page = logged_in(make_org_admin(org)).post("/admin/brain/category/add/", category_form(org, groups=[theirs.pk]))
    assert page.status_code == 200
    assert page.context["adminform"].form.errors["groups"]
    assert not Category.objects.filter(org=org, slug="board").exists()


def test_a_crafted_user_of_another_organisation_is_a_form_error(org, other_org):
    outsider = make_user(other_org)
    page = logged_in(make_org_admin(org)).post("/admin/contacts/contact/add/", contact_form(org, user=outsider.pk))
    assert page.status_code == 200
    assert page.context["adminform"].form.errors["user"]
    assert not Contact.objects.filter(name="Farah").exists()


def test_an_admin_of_two_organisations_cannot_mix_their_rows(org, other_org):
    only_theirs = make_user(other_org)
    theirs = group_of(other_org, "their-board")
    client = logged_in(make_org_admin(org, other_org))
    page = client.post("/admin/brain/category/add/", category_form(org, groups=[theirs.pk]))
    assert page.context["adminform"].form.errors["groups"] == ["Choose only rows of this organisation."]
    page = client.post("/admin/contacts/contact/add/", contact_form(org, user=only_theirs.pk))
    assert page.context["adminform"].form.errors["user"] == ["Choose only rows of this organisation."]
    assert not Contact.objects.exists()
    assert not Category.objects.filter(slug="board").exists()


def test_operators_cannot_mix_organisations_either(org, other_org):
    theirs = group_of(other_org, "their-board")
    page = logged_in(make_operator()).post("/admin/brain/category/add/", category_form(org, groups=[theirs.pk]))
    assert page.context["adminform"].form.errors["groups"]


def test_a_group_of_the_organisation_is_accepted_and_the_change_is_audited(org):
    mine = group_of(org, "board")
    admin = make_org_admin(org)
    client = logged_in(admin)
    assert client.post("/admin/brain/category/add/", category_form(org)).status_code == 302
    category = Category.objects.get(org=org, slug="board")
    form = category_form(org, groups=[mine.pk])
    del form["org"]
    assert client.post(f"/admin/brain/category/{category.pk}/change/", form).status_code == 302
    assert list(category.groups.all()) == [mine]
    changed = AuditRecord.objects.get(org=org, action="category.changed")
    assert changed.user == admin
    assert changed.details["fields"] == {"groups": {"from": [], "to": [mine.pk]}}
    assert AuditRecord.objects.filter(org=org, action="category.added", target=f"category {category.pk}").exists()


def test_a_row_never_moves_to_another_organisation(org, other_org):
    category = Category.objects.create(org=org, slug="board", name="Board")
    client = logged_in(make_org_admin(org, other_org))
    client.post(f"/admin/brain/category/{category.pk}/change/", category_form(other_org, name="Moved"))
    category.refresh_from_db()
    assert category.org == org
    assert category.name == "Moved"


def test_a_membership_role_change_is_audited_and_the_user_stays(org):
    member = make_user(org)
    membership = Membership.objects.get(org=org, user=member)
    admin = make_org_admin(org)
    other = make_user(org)
    form = {"role": Membership.ADMIN, "user": other.pk}
    assert logged_in(admin).post(f"/admin/brain/membership/{membership.pk}/change/", form).status_code == 302
    membership.refresh_from_db()
    assert membership.role == Membership.ADMIN
    assert membership.user == member
    record = AuditRecord.objects.get(org=org, action="membership.changed")
    assert record.details["fields"] == {"role": {"from": "member", "to": "admin"}}


def test_tokens_are_read_only_in_the_admin_but_their_label(org):
    issued = make_token(org, name="laptop")
    token = issued.token
    ApiToken.objects.filter(pk=token.pk).update(revoked_at="2026-01-01T00:00:00Z")
    thief = make_user(org)
    form = {
        "name": "renamed",
        "user": thief.pk,
        "scopes": "read,write,personal",
        "revoked_at_0": "",
        "expires_at_0": "",
    }
    assert logged_in(make_org_admin(org)).post(f"/admin/brain/apitoken/{token.pk}/change/", form).status_code == 302
    token.refresh_from_db()
    assert token.name == "renamed"
    assert token.user != thief
    assert token.revoked_at is not None
    assert token.scopes == ["read", "write"]


def test_an_admin_revokes_the_token_of_someone_who_left_the_organisation(org):
    issued = make_token(org)
    Membership.objects.filter(org=org, user=issued.token.user).delete()
    admin = make_org_admin(org)
    page = logged_in(admin).post(
        "/admin/brain/apitoken/", {"action": "revoke", "_selected_action": [issued.token.pk]}, follow=True
    )
    assert page.status_code == 200
    assert "1 token(s) revoked." in page.content.decode()
    issued.token.refresh_from_db()
    assert issued.token.revoked_at is not None
    record = AuditRecord.objects.get(org=org, action="token.revoked")
    assert record.user == admin
    assert record.via == "admin"
    assert record.details == {"user": issued.token.user.username}


def test_an_admin_cannot_revoke_another_organisations_token_by_crafting_the_action(org, other_org):
    elsewhere = make_token(other_org)
    logged_in(make_org_admin(org)).post(
        "/admin/brain/apitoken/", {"action": "revoke", "_selected_action": [elsewhere.token.pk]}
    )
    elsewhere.token.refresh_from_db()
    assert elsewhere.token.revoked_at is None


def test_pausing_and_resuming_ingestion_in_the_admin_is_audited(org):
    admin = make_org_admin(org)
    client = logged_in(admin)
    client.post("/admin/brain/organisation/", {"action": "pause", "_selected_action": [org.pk]})
    client.post("/admin/brain/organisation/", {"action": "resume", "_selected_action": [org.pk]})
    actions = list(AuditRecord.objects.filter(org=org).order_by("pk").values_list("action", "user"))
    assert actions == [("ingestion.paused", admin.pk), ("ingestion.resumed", admin.pk)]


def test_a_deletion_in_the_admin_is_audited(org):
    contact = Contact.objects.create(org=org, name="Farah")
    client = logged_in(make_org_admin(org))
    assert client.post(f"/admin/contacts/contact/{contact.pk}/delete/", {"post": "yes"}).status_code == 302
    assert AuditRecord.objects.get(org=org, action="contact.deleted").details == {"was": "Farah"}


def test_org_admins_cannot_delete_usage_records(org):
    call = record_tool_call(actor=make_actor(org), tool="search_company_memory", duration_ms=1, outcome="ok")
    client = logged_in(make_org_admin(org))
    assert client.post(f"/admin/brain/toolcall/{call.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ToolCall.objects.filter(pk=call.pk).exists()


def test_a_contact_saved_in_the_admin_gets_its_topics_embedded_after_the_save_commits(
    org, django_capture_on_commit_callbacks
):
    client = logged_in(make_org_admin(org))
    with django_capture_on_commit_callbacks(execute=False) as pending:
        form = contact_form(org, created_at_0="2026-12-01", created_at_1="09:00:00")
        page = client.post("/admin/contacts/contact/add/", form)
        assert page.status_code == 302, page.context["adminform"].form.errors
        contact = Contact.objects.get(org=org, name="Farah")
        assert contact.topics_embedding is None  # nothing embedded inside the admin's transaction
    for callback in pending:
        callback()
    contact.refresh_from_db()
    assert contact.topics_embedding is not None
    assert contact.topics_embedding_model
