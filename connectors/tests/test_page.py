"""The Connectors page: an admin adds a connection (its token never shown again), syncs it now,
pauses it, replaces its credentials and removes it; members are refused; each org's admin sees
only their own organisation's connections."""

from __future__ import annotations

import pytest
from django.test import Client

from brain.models import Category, Features
from conftest import make_org, make_user
from connectors.models import Connection
from connectors.sealing import unseal

pytestmark = pytest.mark.django_db


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


def add(client, org, **changes):
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    form = {"org": org.pk, "kind": "github", "name": "GitHub: api", "category": category.pk,
            "credential_token": "ghp_secret_value", "option_repositories": "acme/api\nacme/web"}  # fmt: skip
    form.update(changes)
    return client.post("/connectors/", form)


def test_an_admin_adds_and_manages_a_connection():
    org = make_org()
    admin = logged_in(make_user(org, role="admin"))
    assert add(admin, org).status_code == 302
    connection = Connection.objects.get(org=org)
    assert connection.options == {"repositories": ["acme/api", "acme/web"]}
    assert unseal(connection.sealed_credentials) == {"token": "ghp_secret_value"}
    page = admin.get("/connectors/").content.decode()
    assert "GitHub: api" in page
    assert "waiting for its first sync" in page
    assert "ghp_secret_value" not in page
    admin.post(f"/connectors/{connection.pk}/pause/")
    connection.refresh_from_db()
    assert connection.paused_at is not None
    admin.post(f"/connectors/{connection.pk}/resume/")
    admin.post(f"/connectors/{connection.pk}/credentials/", {"credential_token": "ghp_new"})
    connection.refresh_from_db()
    assert connection.paused_at is None
    assert unseal(connection.sealed_credentials) == {"token": "ghp_new"}
    admin.post(f"/connectors/{connection.pk}/remove/", {"documents": "delete"})
    assert not Connection.objects.exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"option_repositories": "not a repo"}, "is not a repository name"),
        ({"option_repositories": ""}, "Name at least one repository"),
        ({"credential_token": ""}, "Paste the token"),
        ({"name": ""}, "Give the connection a name"),
        ({"name": "Git\x00Hub"}, "NUL character"),
        ({"credential_token": "ghp_\x00"}, "NUL character"),
    ],
)
def test_bad_input_is_refused_with_a_sentence(changes, message):
    org = make_org()
    admin = logged_in(make_user(org, role="admin"))
    answer = add(admin, org, **changes)
    assert answer.status_code == 400
    assert message in answer.content.decode()
    assert not Connection.objects.exists()


def test_members_and_other_organisations_admins_are_refused():
    org, other = make_org(), make_org()
    add(logged_in(make_user(org, role="admin")), org)
    connection = Connection.objects.get()
    member = logged_in(make_user(org))
    assert member.get("/connectors/").status_code == 403
    member.post(f"/connectors/{connection.pk}/remove/", {"documents": "delete"})
    stranger = logged_in(make_user(other, role="admin"))
    assert "GitHub: api" not in stranger.get("/connectors/").content.decode()
    stranger.post(f"/connectors/{connection.pk}/remove/", {"documents": "delete"})
    assert Connection.objects.filter(pk=connection.pk).exists()
    # A category of another organisation cannot be chosen.
    foreign = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    assert add(stranger, other, category=foreign.pk).status_code == 400


def test_an_organisation_with_connections_can_be_deleted():
    from brain.models import Organisation

    org = make_org()
    add(logged_in(make_user(org, role="admin")), org)
    Organisation.objects.filter(pk=org.pk).delete()
    assert not Connection.objects.exists()


def test_an_admin_sees_a_connections_tools_and_grants_its_actions():
    org = make_org()
    admin = logged_in(make_user(org, role="admin"))
    add(admin, org)
    connection = Connection.objects.get(org=org)
    page = admin.get("/connectors/").content.decode()
    assert "<code>github_search_pull_requests</code>" in page
    assert "off until you grant it" in page
    admin.post(f"/connectors/{connection.pk}/grant/", {"tool": "github_comment"})
    connection.refresh_from_db()
    assert connection.granted_tools == ["github_comment"]
    assert "grant:github_comment" in Features.objects.get(org=org).connected
    page = admin.get("/connectors/").content.decode()
    assert "Withdraw github_comment on GitHub: api" in page
    refused = admin.post(f"/connectors/{connection.pk}/grant/", {"tool": "github_search_issues"}, follow=True)
    assert "not an action of a github connection" in refused.content.decode()
    member = logged_in(make_user(org))
    member.post(f"/connectors/{connection.pk}/withdraw/", {"tool": "github_comment"})
    connection.refresh_from_db()
    assert connection.granted_tools == ["github_comment"]  # a member cannot withdraw it
    admin.post(f"/connectors/{connection.pk}/withdraw/", {"tool": "github_comment"})
    connection.refresh_from_db()
    assert connection.granted_tools == []
    assert Features.objects.get(org=org).connected == ["connector:github"]
