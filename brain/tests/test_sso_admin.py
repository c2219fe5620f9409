"""Setting up single sign-on in the admin: the secret sealed, the maps checked, each
organisation's admins seeing their own."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group
from django.core.management import call_command

from brain.infra.sealing import unseal_secret
from brain.models import AuditRecord, OrganisationGroup, SingleSignOn
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_org

pytestmark = pytest.mark.django_db

SECRET = "the-secret-the-provider-gave"  # noqa: S105


def form(org_id: int, **changes: Any) -> dict[str, Any]:
    fields = {
        "org": org_id,
        "enabled": "on",
        "label": "Okta",
        "issuer": "https://acme.okta.com",
        "client_id": "0oa1brain",
        "client_secret": SECRET,
        "scopes": "openid email profile groups",
        "allowed_domains": "Acme.com, acme.co.uk",
        "provision": SingleSignOn.DOMAIN,
        "groups_claim": "groups",
        "role_map": '{"brain-admins": "admin"}',
        "group_map": "{}",
        "password_sign_in": "on",
    }
    return {**fields, **changes}


def test_the_client_secret_is_sealed_and_never_shown_or_audited():
    org = make_org()
    client = logged_in(make_org_admin(org))
    saved = client.post("/admin/brain/singlesignon/add/", form(org.pk))
    assert saved.status_code == 302, saved.context["adminform"].form.errors if saved.context else saved
    sso = SingleSignOn.objects.get(org=org)
    assert SECRET not in sso.sealed_client_secret
    assert unseal_secret(sso.sealed_client_secret) == SECRET
    assert sso.allowed_domains == ["acme.co.uk", "acme.com"]
    assert SECRET not in client.get(f"/admin/brain/singlesignon/{sso.pk}/change/").content.decode()
    record = AuditRecord.objects.get(action="singlesignon.added", org=org)
    assert SECRET not in str(record.details)

    kept = client.post(f"/admin/brain/singlesignon/{sso.pk}/change/", form(org.pk, client_secret="", label="Acme"))
    assert kept.status_code == 302
    assert unseal_secret(SingleSignOn.objects.get(pk=sso.pk).sealed_client_secret) == SECRET


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"issuer": "http://acme.okta.com"}, "issuer", "https://"),
        ({"scopes": "profile"}, "scopes", '"openid" and "email"'),
        ({"allowed_domains": "not a domain"}, "allowed_domains", "Not a domain"),
        ({"allowed_domains": ""}, "allowed_domains", "Name the domains"),
        ({"role_map": '{"x": "owner"}'}, "role_map", '"admin" or "member"'),
        ({"group_map": '{"finance": "Finance"}'}, "group_map", "No group of this organisation is called Finance"),
        ({"client_secret": ""}, "client_secret", "Paste the client secret"),
    ],
)
def test_the_admin_says_what_is_wrong_with_a_setting(changes, field, words):
    org, other = make_org(), make_org()
    OrganisationGroup.objects.create(group=Group.objects.create(name="Finance"), org=other)  # not this one's
    refused = logged_in(make_org_admin(org)).post("/admin/brain/singlesignon/add/", form(org.pk, **changes))
    assert refused.status_code == 200
    errors = refused.context["adminform"].form.errors
    assert words in " ".join(errors.get(field, [])), errors


def test_an_organisations_admins_see_their_own_single_sign_on_only():
    mine, theirs = make_org(), make_org()
    for org in (mine, theirs):
        SingleSignOn.objects.create(org=org, label=f"IdP of {org.slug}", issuer="https://id.test", client_id="x")
    page = logged_in(make_org_admin(mine)).get("/admin/brain/singlesignon/").content.decode()
    assert f"IdP of {mine.slug}" in page
    assert f"IdP of {theirs.slug}" not in page
    other = SingleSignOn.objects.get(org=theirs)
    assert logged_in(make_org_admin(mine)).get(f"/admin/brain/singlesignon/{other.pk}/change/").status_code == 302


def test_rotating_the_keys_seals_the_client_secret_again(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.BRAIN_CONNECTOR_KEYS = [old]
    org = make_org()
    logged_in(make_operator()).post("/admin/brain/singlesignon/add/", form(org.pk))
    settings.BRAIN_CONNECTOR_KEYS = [new, old]
    said = StringIO()
    call_command("rotate_connector_keys", stdout=said)
    assert "1 single sign-on client secret(s) sealed" in said.getvalue()
    settings.BRAIN_CONNECTOR_KEYS = [new]
    assert unseal_secret(SingleSignOn.objects.get(org=org).sealed_client_secret) == SECRET


def test_an_organisations_admin_cannot_set_up_single_sign_on_for_another():
    mine, theirs = make_org(), make_org()
    refused = logged_in(make_org_admin(mine)).post("/admin/brain/singlesignon/add/", form(theirs.pk))
    assert refused.status_code == 200
    assert "org" in refused.context["adminform"].form.errors
    assert not SingleSignOn.objects.exists()
