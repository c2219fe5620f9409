"""OAuth 2.1 for /mcp (brain.oauth): discovery, registration, consent, tokens bound to the MCP URL,
one actor with brn_ tokens, refresh rotation with reuse detection, revocation, and the refusals,
each with the OAuth error the specifications name and nothing left half made."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
from django.core.cache import cache
from django.test import Client
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from brain.core.services import authenticate_token
from brain.models import ApiToken, AuditRecord
from conftest import make_org, make_token, make_user
from tests.conftest import call
from tests.oauth_flow import (
    REDIRECT,
    authorize_query,
    connect,
    consent,
    exchange,
    mcp_status,
    pkce,
    redirect_params,
    register,
    register_over_http,
    token,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def base(brain_url, settings):
    settings.BRAIN_BASE_URL = brain_url
    cache.clear()  # client metadata documents are kept in the cache
    return brain_url


@pytest.fixture
def person(base):
    org = make_org()
    user = make_user(org, username="priya", password="a long enough secret")
    client = Client()
    client.force_login(user)
    return org, user, client


def connected(person, base, access="write"):
    """Register an app, allow it, and exchange the code: the client id and the token response."""
    org, _user, client = person
    return connect(client, org.pk, base, access)


def test_a_401_leads_to_both_metadata_documents(base):
    refused = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
    resource = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{base}/mcp"
    assert resource["authorization_servers"] == [base]
    server = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == base
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert server["registration_endpoint"] == f"{base}/oauth/register/"
    assert server["client_id_metadata_document_supported"] is True
    for endpoint in ("authorization_endpoint", "token_endpoint", "revocation_endpoint"):
        assert server[endpoint].startswith(base + "/oauth/")


def test_an_oauth_token_is_the_same_actor_as_a_brn_token(person, base):
    org, user, _client = person
    _client_id, tokens = connected(person, base)
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] <= 3600
    assert set(tokens["scope"].split()) == {"read", "write"}
    profile = call(base, tokens["access_token"], "get_profile")
    assert not profile.is_error
    brn = make_token(org, user=user, scopes="read,write").plaintext
    assert call(base, brn, "get_profile").structured_content == profile.structured_content
    row = ApiToken.objects.get(prefix="app")
    assert row.user == user
    assert row.org == org
    assert row.last_used_at is not None
    assert AuditRecord.objects.filter(action="app.connected", org=org).exists()
    # The REST API is another resource: the MCP-bound token is refused there, with the reason.
    rest = Client().get("/api/v1/profile", HTTP_AUTHORIZATION=f"Bearer {tokens['access_token']}")
    assert rest.status_code == 401
    assert "MCP endpoint" in rest.json()["message"]


def test_personal_only_is_kept_by_an_oauth_token(person, base):
    _client_id, tokens = connected(person, base, access="personal")
    assert set(tokens["scope"].split()) == {"read", "write", "personal"}
    shared = call(
        base, tokens["access_token"], "remember", {"content": "The office wifi is Brainnet", "personal": False}
    )
    assert shared.is_error


def test_refresh_rotates_and_a_replayed_refresh_token_ends_the_family(person, base):
    client_id, tokens = connected(person, base)
    first = token(Client(), grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id)
    assert first.status_code == 200
    rotated = first.json()
    assert rotated["refresh_token"] != tokens["refresh_token"]
    assert not call(base, rotated["access_token"], "get_profile").is_error
    replay = token(Client(), grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    # Reuse detection: the rotated refresh token of the same family is dead too.
    after = token(Client(), grant_type="refresh_token", refresh_token=rotated["refresh_token"], client_id=client_id)
    assert after.status_code == 400
    assert after.json()["error"] == "invalid_grant"


def test_revocation_takes_effect_on_the_next_call(person, base):
    client_id, tokens = connected(person, base)
    assert not call(base, tokens["access_token"], "get_profile").is_error
    revoked = Client().post("/oauth/revoke/", {"token": tokens["access_token"], "client_id": client_id})
    assert revoked.status_code == 200
    assert mcp_status(base, tokens["access_token"]) == 401


def test_disconnecting_on_the_page_ends_access_and_refresh(person, base):
    _org, _user, client = person
    client_id, tokens = connected(person, base)
    page = client.get("/connect/apps/")
    assert b"Test Assistant" in page.content
    assert b"name not verified" in page.content
    row = ApiToken.objects.get(prefix="app")
    client.post(f"/connect/apps/{row.pk}/disconnect/")
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert mcp_status(base, tokens["access_token"]) == 401
    refresh = token(Client(), grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id)
    assert refresh.status_code == 400
    assert b"Disconnected apps (1)" in client.get("/connect/apps/").content


def test_an_admin_revoking_the_connection_in_the_admin_ends_it(person, base):
    org, _user, _client = person
    client_id, tokens = connected(person, base)
    admin = make_user(org, username="ada", role="admin", password="a long enough secret", is_staff="1")
    staff = Client()
    staff.force_login(admin)
    listed = staff.get("/admin/brain/apitoken/?kind=app")
    assert b"(connected app)" in listed.content
    row = ApiToken.objects.get(prefix="app")
    staff.post("/admin/brain/apitoken/", {"action": "revoke", "_selected_action": [row.pk]})
    assert mcp_status(base, tokens["access_token"]) == 401
    again = token(Client(), grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id)
    assert again.status_code == 400


def test_denying_sends_access_denied_and_keeps_nothing(person, base):
    org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    sent = consent(client, client_id, pkce(), f"{base}/mcp", org=org.pk, allow=False)
    assert sent["error"] == "access_denied"
    assert sent["state"] == "st-123"
    assert not ApiToken.objects.filter(prefix="app").exists()
    assert not Grant.objects.exists()


def test_the_consent_page_names_the_app_as_unverified_and_offers_each_organisation(person, base):
    org, user, client = person
    second = make_org()
    from brain.models import Membership

    Membership.objects.create(org=second, user=user, role="member")
    client_id = register(Client(), client_name="Totally Official Brain App").json()["client_id"]
    page = client.get(authorize_query(client_id, pkce(), f"{base}/mcp"))
    text = page.content.decode()
    assert "Totally Official Brain App" in text
    assert "has not verified it" in text
    assert org.name in text
    assert second.name in text
    for label in ("Read only", "Read and write", "Personal memories only"):
        assert label in text
    assert "this computer" in text  # a loopback redirect


def test_the_consent_page_needs_a_login(base):
    client_id = register(Client()).json()["client_id"]
    answer = Client().get(authorize_query(client_id, pkce(), f"{base}/mcp"))
    assert answer.status_code == 302
    assert answer["Location"].startswith("/login/")


# --- Refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://ok.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"client_name": "x" * 500}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
        ({"client_name": "Nul\u0000App"}, "invalid_client_metadata"),
        ({"redirect_uris": ["https://ok.example/c\u0000b"]}, "invalid_client_metadata"),
        ({"client_name": "\ud800"}, "invalid_client_metadata"),
    ],
)
def test_bad_registration_metadata_is_refused_and_registers_nothing(base, metadata, error):
    answer = register(Client(), **metadata)
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"] == error
    assert answer.json()["error_description"]
    assert not Application.objects.exists()


def test_a_registration_body_that_is_not_json_is_refused(base):
    answer = Client().post("/oauth/register/", "not json", content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()


def test_registration_can_be_limited_to_hosts_and_switched_off(base, settings):
    settings.BRAIN_OAUTH_REDIRECT_HOSTS = ["claude.ai"]
    assert register(Client(), redirect_uris=["https://claude.ai/api/mcp/auth_callback"]).status_code == 201
    refused = register(Client(), redirect_uris=["https://elsewhere.example/cb"])
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "DCR_ENABLED": False}
    settings.BRAIN_OAUTH_REGISTRATION = False
    assert register(Client()).status_code == 404
    assert "registration_endpoint" not in Client().get("/.well-known/oauth-authorization-server").json()


def test_a_confidential_client_gets_a_secret_and_must_use_it(person, base):
    org, _user, client = person
    registered = register(Client(), token_endpoint_auth_method="client_secret_post").json()
    assert registered["client_secret"]
    code = pkce()
    sent = consent(client, registered["client_id"], code, f"{base}/mcp", org=org.pk)
    without = exchange(Client(), registered["client_id"], sent["code"], code.verifier)
    assert without.status_code == 401
    assert without.json()["error"] == "invalid_client"


def test_unknown_client_and_mismatched_redirect_are_shown_not_redirected(person, base):
    _org, _user, client = person
    unknown = client.get(authorize_query("no-such-client", pkce(), f"{base}/mcp"))
    assert unknown.status_code == 400
    assert b"client_id" in unknown.content
    client_id = register(Client()).json()["client_id"]
    elsewhere = client.get(authorize_query(client_id, pkce(), f"{base}/mcp", redirect_uri="https://evil.example/cb"))
    assert elsewhere.status_code == 400
    assert b"evil.example" not in elsewhere.get("Location", "").encode()


def test_a_loopback_redirect_may_use_another_port(person, base):
    org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    page = client.get(authorize_query(client_id, pkce(), f"{base}/mcp", redirect_uri="http://127.0.0.1:9999/callback"))
    assert page.status_code == 200


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
        ({"nonce": "a\u0000b"}, "invalid_request"),
    ],
)
def test_missing_or_plain_pkce_and_another_resource_go_back_as_errors(person, base, change, error):
    _org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    sent = redirect_params(client.get(authorize_query(client_id, pkce(), f"{base}/mcp", **change)))
    assert sent["error"] == error
    assert sent["state"] == "st-123"
    assert not Grant.objects.exists()


def test_a_code_works_once_and_only_with_its_verifier(person, base):
    org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    sent = consent(client, client_id, code, f"{base}/mcp", org=org.pk)
    wrong = exchange(Client(), client_id, sent["code"], pkce().verifier)
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    code2 = pkce()
    sent2 = consent(client, client_id, code2, f"{base}/mcp", org=org.pk)
    assert exchange(Client(), client_id, sent2["code"], code2.verifier).status_code == 200
    reused = exchange(Client(), client_id, sent2["code"], code2.verifier)
    assert reused.status_code == 400
    assert reused.json()["error"] == "invalid_grant"


def test_a_token_request_for_another_resource_is_refused(person, base):
    org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    sent = consent(client, client_id, code, f"{base}/mcp", org=org.pk)
    other = exchange(Client(), client_id, sent["code"], code.verifier, resource="https://other.example/mcp")
    assert other.status_code == 400
    assert other.json()["error"] == "invalid_target"
    assert not AccessToken.objects.filter(application__client_id=client_id, user__isnull=False).exists()
    # A refused exchange ends the code: the app starts again from the authorise page.
    again = exchange(Client(), client_id, sent["code"], code.verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_a_token_bound_to_another_resource_is_refused_at_mcp(person, base):
    _client_id, tokens = connected(person, base)
    AccessToken.objects.update(resource=["https://other.example/mcp"])
    assert authenticate_token(tokens["access_token"]) is None
    assert mcp_status(base, tokens["access_token"]) == 401


def test_an_expired_access_token_and_a_registration_token_do_not_reach_mcp(person, base):
    from datetime import timedelta

    from django.utils import timezone

    registered = register(Client()).json()
    reg_token = registered["registration_access_token"]
    client_id, tokens = connected(person, base)
    AccessToken.objects.filter(application__client_id=client_id).update(expires=timezone.now() - timedelta(seconds=1))
    for value in (tokens["access_token"], reg_token):
        assert mcp_status(base, value) == 401
    assert RefreshToken.objects.exists()


def test_apps_nobody_allowed_are_purged_after_a_day_and_connected_ones_stay(person, base):
    from datetime import timedelta

    from django.utils import timezone

    from brain.oauth.connections import purge_unused

    connected_id, _tokens = connected(person, base)
    idle_id = register(Client()).json()["client_id"]
    Application.objects.update(created=timezone.now() - timedelta(days=2))
    assert purge_unused() == 1
    assert set(Application.objects.values_list("client_id", flat=True)) == {connected_id}
    assert idle_id not in Application.objects.values_list("client_id", flat=True)


def test_connected_apps_are_not_listed_as_tokens_on_the_connect_page(person, base):
    _org, _user, client = person
    connected(person, base)
    page = client.get("/connect/").content.decode()
    assert "Test Assistant" not in page
    assert "/connect/apps/" in page


def test_an_app_cannot_update_its_registration_past_the_rules(base, settings):
    registered = register(Client()).json()
    where = urlsplit(registered["registration_client_uri"]).path
    auth = {"Authorization": f"Bearer {registered['registration_access_token']}"}
    body = {
        "client_id": registered["client_id"],
        "client_name": "Renamed",
        "redirect_uris": ["http://evil.example/cb"],
        "token_endpoint_auth_method": "none",
    }
    refused = Client().put(where, body, content_type="application/json", headers=auth)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.get(client_id=registered["client_id"]).redirect_uris == REDIRECT
    body["redirect_uris"] = ["https://app.example/cb"]
    updated = Client().put(where, body, content_type="application/json", headers=auth)
    assert updated.status_code == 200, updated.content
    assert Application.objects.get(client_id=registered["client_id"]).name == "Renamed"


def test_the_mcp_url_spelled_another_way_is_the_same_resource(person, base):
    org, _user, client = person
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    spelled = base.upper().replace("HTTP://", "http://") + "/mcp/"  # host case and a trailing slash
    sent = consent(client, client_id, code, spelled, org=org.pk)
    tokens = exchange(Client(), client_id, sent["code"], code.verifier, resource=spelled).json()
    assert AccessToken.objects.get(application__client_id=client_id, user__isnull=False).resource == [f"{base}/mcp"]
    assert not call(base, tokens["access_token"], "get_profile").is_error


def test_a_member_who_leaves_takes_their_connected_apps_with_them(person, base):
    from brain.models import Membership

    org, user, _client = person
    _client_id, tokens = connected(person, base)
    Membership.objects.filter(org=org, user=user).delete()
    assert mcp_status(base, tokens["access_token"]) == 401


def test_the_consent_page_cannot_be_framed_or_answered_from_another_site(person, base):
    org, user, _client = person
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(user)
    page = guarded.get(authorize_query(client_id, code, f"{base}/mcp"))
    assert page["X-Frame-Options"] == "DENY"
    form = page.context["form"]
    forged = {name: form.initial.get(name) or "" for name in form.fields if name not in ("allow", "org", "access")}
    forged.update(org=str(org.pk), access="write", allow="on")
    assert guarded.post("/oauth/authorize/", forged).status_code == 403
    assert not ApiToken.objects.filter(prefix="app").exists()


def test_one_address_cannot_fill_the_clients_table(base, settings):
    settings.BRAIN_OAUTH_REGISTRATIONS_PER_HOUR = 3
    answers = [register(Client()) for _ in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert answers[-1].json()["error"] == "too_many_requests"
    assert answers[-1]["Retry-After"] == "3600"
    assert Application.objects.count() == 3


def test_the_registration_limit_holds_across_processes_and_restarts(base, settings):
    settings.BRAIN_OAUTH_REGISTRATIONS_PER_HOUR = 2
    assert [register_over_http(base).status_code for _ in range(2)] == [201, 201]
    cache.clear()  # all a process keeps in memory, as after a restart or in another web process
    refused = register_over_http(base)
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert Application.objects.count() == 2
