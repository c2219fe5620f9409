"""What ends an OAuth code or a family of tokens, over HTTP against the served app: a person who
left the organisation or was deactivated, a failed exchange of a code, and a code presented a
second time (brain.oauth.codes, brain.oauth.validator)."""

from __future__ import annotations

import pytest
from django.test import Client

from brain.core.services import add_member
from brain.models import Membership
from conftest import make_org, make_user
from tests.conftest import call
from tests.oauth_flow import REDIRECT, connect, consent, mcp_status, pkce, register, register_over_http, token_over_http

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def base(brain_url, settings):
    settings.BRAIN_BASE_URL = brain_url
    return brain_url


@pytest.fixture
def member(base):
    org = make_org()
    user = make_user(org, username="priya", password="a long enough secret")
    client = Client()
    client.force_login(user)
    return org, user, client


def refresh(base, client_id, refresh_token):
    return token_over_http(base, grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id)


def exchange(base, client_id, code, verifier, redirect_uri=REDIRECT):
    fields = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "code_verifier": verifier}
    return token_over_http(base, redirect_uri=redirect_uri, **fields)


def works(base, access_token):
    return not call(base, access_token, "get_profile").is_error


def assert_invalid_grant(answer):
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_grant"


def leave(org, user):
    Membership.objects.filter(org=org, user=user).delete()


def come_back(org, user):
    add_member(org=org, user=user)


def deactivate(org, user):
    user.is_active = False
    user.save(update_fields=["is_active"])


def reactivate(org, user):
    user.is_active = True
    user.save(update_fields=["is_active"])


@pytest.mark.parametrize(("end", "undo"), [(leave, come_back), (deactivate, reactivate)], ids=["left", "deactivated"])
def test_a_person_who_is_gone_gets_invalid_grant_and_coming_back_revives_nothing(member, base, end, undo):
    org, user, client = member
    client_id, first = connect(client, org.pk, base)
    rotated = refresh(base, client_id, first["refresh_token"]).json()
    end(org, user)
    assert_invalid_grant(refresh(base, client_id, rotated["refresh_token"]))
    undo(org, user)
    # The whole family ended with the refusal: the access token and the refresh token it came with.
    assert mcp_status(base, rotated["access_token"]) == 401
    assert_invalid_grant(refresh(base, client_id, rotated["refresh_token"]))
    # Allowing the app again gives it a new family, which works.
    code = pkce()
    sent = consent(client, client_id, code, f"{base}/mcp", org=org.pk)
    again = exchange(base, client_id, sent["code"], code.verifier).json()
    assert works(base, again["access_token"])


def wrong_verifier(base, client_id, code, verifier):
    return exchange(base, client_id, code, pkce().verifier)


def wrong_redirect(base, client_id, code, verifier):
    return exchange(base, client_id, code, verifier, redirect_uri="http://127.0.0.1:7777/elsewhere")


def wrong_client(base, client_id, code, verifier):
    other = register(Client()).json()["client_id"]
    return exchange(base, other, code, verifier)


@pytest.mark.parametrize("attempt", [wrong_verifier, wrong_redirect, wrong_client])
def test_a_code_is_dead_after_any_failed_exchange(member, base, attempt):
    org, _user, client = member
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    sent = consent(client, client_id, code, f"{base}/mcp", org=org.pk)
    failed = attempt(base, client_id, sent["code"], code.verifier)
    assert failed.status_code == 400, failed.text
    assert_invalid_grant(exchange(base, client_id, sent["code"], code.verifier))


def test_a_replayed_code_ends_every_token_of_its_first_exchange_and_no_others(member, base):
    org, _user, client = member
    client_id = register(Client()).json()["client_id"]
    code, other = pkce(), pkce()
    replayed = consent(client, client_id, code, f"{base}/mcp", org=org.pk)
    kept = consent(client, client_id, other, f"{base}/mcp", org=org.pk)
    first = exchange(base, client_id, replayed["code"], code.verifier).json()
    rotated = refresh(base, client_id, first["refresh_token"]).json()
    untouched = exchange(base, client_id, kept["code"], other.verifier).json()
    assert works(base, rotated["access_token"])
    assert_invalid_grant(exchange(base, client_id, replayed["code"], code.verifier))
    assert mcp_status(base, rotated["access_token"]) == 401
    assert_invalid_grant(refresh(base, client_id, rotated["refresh_token"]))
    # Another code's exchange for the same app and person is not touched.
    assert works(base, untouched["access_token"])
    assert refresh(base, client_id, untouched["refresh_token"]).status_code == 200


def test_the_nightly_purge_forgets_spent_codes_without_tokens_and_past_hours_counts(member, base):
    from datetime import timedelta

    from oauth2_provider.models import RefreshToken

    from brain.models import RegistrationCount, SpentCode
    from brain.oauth.connections import purge_unused

    org, _user, client = member
    connect(client, org.pk, base)
    assert register_over_http(base).status_code == 201
    purge_unused()
    assert SpentCode.objects.count() == 1  # its family still has a token a replay would end
    assert RegistrationCount.objects.count() == 1  # this hour's count still limits
    RefreshToken.objects.all().delete()
    counted = RegistrationCount.objects.get()
    RegistrationCount.objects.update(hour=counted.hour - timedelta(hours=1))
    purge_unused()
    assert not SpentCode.objects.exists()
    assert not RegistrationCount.objects.exists()
