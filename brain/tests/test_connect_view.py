"""The Connect page: a token is issued once per form sent, its plaintext shown on one page view
only, access named in words, revoking confirmed, revoked tokens folded away."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from brain.core.services import revoke_token
from brain.faces.times import local_time
from brain.models import ApiToken
from conftest import make_actor, make_token, make_user

pytestmark = pytest.mark.django_db

FORM = {"name": "Claude on my laptop", "access": "write", "expires": ""}


def member_client(org):
    user = make_user(org)
    client = Client()
    client.force_login(user)
    return user, client


def test_creating_a_token_redirects_and_the_next_page_shows_the_plaintext_once(org):
    user, client = member_client(org)

    created = client.post("/connect/", {**FORM, "org": org.pk})

    assert created.status_code == 302
    assert created["Location"] == "/connect/"
    assert ApiToken.objects.filter(user=user).count() == 1
    shown = client.get("/connect/").content.decode()
    token = ApiToken.objects.get(user=user)
    plaintext = shown.split('id="token-value">')[1].split("<")[0]
    assert plaintext.startswith(f"brn_{token.prefix}_")
    assert f"--header &quot;Authorization: Bearer {plaintext}&quot;" in shown
    again = client.get("/connect/").content.decode()
    assert plaintext not in again
    assert "Your new token" not in again
    assert ApiToken.objects.filter(user=user).count() == 1


def test_the_page_that_shows_a_plaintext_is_never_cached(org):
    _, client = member_client(org)
    client.post("/connect/", {**FORM, "org": org.pk})
    response = client.get("/connect/")
    assert "no-store" in response["Cache-Control"]


def test_a_form_error_issues_nothing_and_redirects_nowhere(org):
    user, client = member_client(org)
    response = client.post("/connect/", {**FORM, "org": org.pk, "expires": "soon"})
    assert response.status_code == 400
    assert "Choose an expiry from the list." in response.content.decode()
    assert not ApiToken.objects.filter(user=user).exists()


@pytest.mark.parametrize(
    ("access", "scopes", "label"),
    [
        ("read", ["read"], "Read only"),
        ("write", ["read", "write"], "Read and write"),
        ("personal", ["personal", "read", "write"], "Personal memories only"),
    ],
)
def test_each_access_is_named_in_words(org, access, scopes, label):
    user, client = member_client(org)
    client.post("/connect/", {**FORM, "org": org.pk, "access": access})
    token = ApiToken.objects.get(user=user)
    assert token.scopes == scopes
    row = client.get("/connect/").content.decode().split(f'<td data-label="Token">{token}</td>')[1]
    assert f'<td data-label="Access">{label}</td>' in row.split("</tr>")[0]


def test_tokens_show_when_they_were_created_and_last_used(org):
    user, client = member_client(org)
    issued = make_token(org, user=user, name="desk")
    used = timezone.now() - timedelta(days=2)
    ApiToken.objects.filter(pk=issued.token.pk).update(last_used_at=used)
    html = client.get("/connect/").content.decode()
    row = html.split(f'<td data-label="Token">{issued.token}</td>')[1].split("</tr>")[0]
    created = local_time(issued.token.created_at, org)  # in the organisation's zone, the zone named
    assert '<td data-label="Created"><time datetime="' in row
    assert f">{created}</time>" in row
    assert f">{local_time(used, org)}</time></td>" in row.split('"Last used"')[1]


def test_revoked_and_expired_tokens_are_folded_away(org):
    user, client = member_client(org)
    active = make_token(org, user=user, name="active one")
    revoked = make_token(org, user=user, name="revoked one")
    revoke_token(actor=make_actor(org, user), token_id=revoked.token.pk)
    expired = make_token(org, user=user, name="expired one")
    ApiToken.objects.filter(pk=expired.token.pk).update(expires_at=timezone.now() - timedelta(days=1))

    html = client.get("/connect/").content.decode()

    folded = html.split("<details")[1].split("</details>")[0]
    assert "Revoked and expired tokens (2)" in folded
    assert "revoked one" in folded
    assert "expired one" in folded
    assert "active one" not in folded
    assert f"Revoke {active.token}" in html
    assert f"Revoke {revoked.token}" not in html


def test_revoking_without_confirmation_only_asks(org):
    user, client = member_client(org)
    issued = make_token(org, user=user, name="desk")

    asked = client.post(f"/connect/tokens/{issued.token.pk}/revoke/")

    assert asked.status_code == 200
    assert "Revoke this token?" in asked.content.decode()
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is None
    done = client.post(f"/connect/tokens/{issued.token.pk}/revoke/", {"confirm": "yes"}, follow=True)
    assert "revoked" in done.content.decode()
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None


def test_the_revoke_form_asks_in_a_dialog_before_it_is_sent(org):
    user, client = member_client(org)
    issued = make_token(org, user=user, name="desk")
    html = client.get("/connect/").content.decode()
    form = html.split(f'action="/connect/tokens/{issued.token.pk}/revoke/"')[1].split("</form>")[0]
    assert 'data-confirm="Revoke ' in form
    assert '<input type="hidden" name="confirm" value="">' in form


def test_another_users_token_cannot_be_revoked_even_confirmed(org):
    _, client = member_client(org)
    theirs = make_token(org, name="theirs")
    client.post(f"/connect/tokens/{theirs.token.pk}/revoke/", {"confirm": "yes"})
    assert ApiToken.objects.get(pk=theirs.token.pk).revoked_at is None
