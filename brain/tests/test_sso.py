"""Single sign-on against a real, certified OpenID Connect provider (npm's oidc-provider) on
loopback: Brain's pages through Django's test client, the provider through HTTP as a browser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from brain.core.services import actor_for_user
from brain.infra.sealing import seal_secret
from brain.models import AuditRecord, Category, Membership, OrganisationGroup, SingleSignOn, SsoIdentity
from brain.sso.provider import SESSION_BACKEND
from conftest import make_org, make_user
from memory.access import readable_category_ids
from tests.oidc_provider import Provider, oidc_provider

pytestmark = pytest.mark.django_db

ALICE = {"email": "alice@acme.test", "email_verified": True, "name": "Alice Example", "groups": ["staff"]}


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with oidc_provider() as running:
        yield running


@pytest.fixture
def idp(provider: Provider) -> Provider:
    provider.set_accounts({"alice": ALICE})
    provider.tamper()
    return provider


@pytest.fixture
def sso(idp: Provider) -> SingleSignOn:
    org = make_org("acme")
    finance = Group.objects.create(name="Finance")
    OrganisationGroup.objects.create(group=finance, org=org)
    return SingleSignOn.objects.create(
        org=org,
        label="Acme ID",
        issuer=idp.issuer,
        client_id=idp.client_id,
        sealed_client_secret=seal_secret(idp.client_secret),
        scopes="openid email profile groups",
        allowed_domains=["acme.test"],
        provision=SingleSignOn.DOMAIN,
        role_map={"brain-admins": "admin", "staff": "member"},
        group_map={"finance": "Finance"},
    )


def start(client: Client, org_slug: str = "acme", next_url: str = "") -> str:
    answer = client.get(f"/sso/{org_slug}/login/" + (f"?next={next_url}" if next_url else ""))
    assert answer.status_code == 302, answer.content
    return str(answer["Location"])


def sign_in(client: Client, idp: Provider, account: str = "alice", next_url: str = "") -> Any:
    return client.get(idp.sign_in(start(client, next_url=next_url), account))


def signed_in_as(client: Client) -> User | None:
    user = client.get("/account/").wsgi_request.user
    return user if user.is_authenticated else None


def test_a_member_signs_in_with_the_provider_and_lands_on_the_page_they_asked_for(sso, idp):
    alice = make_user(sso.org, username="alice", email="alice@acme.test")
    client = Client()
    landed = sign_in(client, idp, next_url="/jobs/")
    assert landed.status_code == 302
    assert landed["Location"] == "/jobs/"
    assert signed_in_as(client) == alice
    assert client.session["_auth_user_backend"] == SESSION_BACKEND  # not a password sign-in
    record = AuditRecord.objects.get(action="user.signed_in", org=sso.org)
    assert record.details == {"method": "sso", "issuer": idp.issuer}
    assert record.user == alice
    assert record.via == "sso"
    assert SsoIdentity.objects.get(org=sso.org, subject="alice").user == alice


def test_a_new_person_of_an_allowed_domain_becomes_a_member_on_first_sign_in(sso, idp):
    idp.set_accounts({"bo": {**ALICE, "email": "bo@acme.test", "name": "Bo Lund", "groups": ["brain-admins"]}})
    client = Client()
    sign_in(client, idp, "bo")
    bo = User.objects.get(email="bo@acme.test")
    assert signed_in_as(client) == bo
    assert (bo.first_name, bo.last_name, bo.has_usable_password(), bo.is_staff) == ("Bo", "Lund", False, True)
    assert Membership.objects.get(org=sso.org, user=bo).role == Membership.ADMIN
    added = AuditRecord.objects.get(action="member.added", org=sso.org)
    assert added.details["role"] == "admin"
    assert added.via == "sso"


def test_group_changes_at_the_provider_take_effect_at_the_next_sign_in(sso, idp):
    secret = Category.objects.create(org=sso.org, slug="money", name="Money", restricted=True)
    secret.groups.add(Group.objects.get(name="Finance"))
    client = Client()
    sign_in(client, idp)
    alice = User.objects.get(email="alice@acme.test")
    assert list(alice.groups.all()) == []
    assert Membership.objects.get(user=alice).role == Membership.MEMBER

    idp.set_accounts({"alice": {**ALICE, "groups": ["staff", "finance", "brain-admins"]}})
    sign_in(Client(), idp)
    assert [group.name for group in alice.groups.all()] == ["Finance"]
    assert secret.pk in readable_category_ids(actor=actor_for_user(org=sso.org, user=alice, via="web"))
    assert Membership.objects.get(user=alice).role == Membership.ADMIN
    assert AuditRecord.objects.get(action="member.groups_changed").details["added"] == ["Finance"]
    changed = AuditRecord.objects.get(action="member.role_changed").details
    assert changed == {"old": "member", "new": "admin", "issuer": idp.issuer}

    idp.set_accounts({"alice": ALICE})
    sign_in(Client(), idp)
    alice.refresh_from_db()
    assert list(alice.groups.all()) == []
    assert secret.pk not in readable_category_ids(actor=actor_for_user(org=sso.org, user=alice, via="web"))
    assert not alice.is_staff
    assert Membership.objects.get(user=alice).role == Membership.MEMBER


def test_a_group_the_map_does_not_name_is_left_as_brains_admins_set_it(sso, idp):
    alice = make_user(sso.org, username="alice", email="alice@acme.test")
    legal = Group.objects.create(name="Legal")
    OrganisationGroup.objects.create(group=legal, org=sso.org)
    alice.groups.add(legal)
    sign_in(Client(), idp)
    assert [group.name for group in alice.groups.all()] == ["Legal"]


def test_a_person_of_a_domain_the_organisation_does_not_allow_is_not_signed_in(sso, idp):
    idp.set_accounts({"eve": {**ALICE, "email": "eve@elsewhere.test"}})
    client = Client()
    refused = sign_in(client, idp, "eve")
    assert refused.status_code == 403
    assert "does not let elsewhere.test addresses sign in with Acme ID" in refused.content.decode()
    assert signed_in_as(client) is None
    assert not User.objects.filter(email="eve@elsewhere.test").exists()


def test_an_unverified_address_is_not_signed_in(sso, idp):
    idp.set_accounts({"alice": {**ALICE, "email_verified": False}})
    refused = sign_in(Client(), idp)
    assert refused.status_code == 403
    assert "has not verified alice@acme.test" in refused.content.decode()


def test_an_invited_only_organisation_signs_in_the_invited_and_no_one_else(sso, idp):
    sso.provision = SingleSignOn.INVITED
    sso.save()
    client = Client()
    refused = sign_in(client, idp)
    assert refused.status_code == 403
    assert "has not been invited to" in refused.content.decode()
    assert signed_in_as(client) is None
    assert not User.objects.filter(email="alice@acme.test").exists()

    invited = make_user(sso.org, username="alice", email="alice@acme.test")
    sign_in(client, idp)
    assert signed_in_as(client) == invited


@pytest.mark.parametrize(
    "how",
    [
        {"mode": "payload", "claims": {"email": "ceo@acme.test", "sub": "ceo"}},  # claims changed, signature kept
        {"mode": "unsigned"},  # alg "none"
    ],
)
def test_a_tampered_id_token_signs_nobody_in(sso, idp, how):
    ceo = make_user(sso.org, username="ceo", email="ceo@acme.test")
    idp.tamper(**how)
    client = Client()
    refused = sign_in(client, idp)
    assert refused.status_code == 400
    assert "could not be trusted" in refused.content.decode()
    assert signed_in_as(client) is None
    assert not AuditRecord.objects.filter(action__in=["user.signed_in", "member.added"]).exists()
    assert ceo.sso_identities.count() == 0


def test_a_replayed_callback_signs_nobody_in(sso, idp):
    client = Client()
    callback = idp.sign_in(start(client), "alice")
    assert client.get(callback).status_code == 302
    client.post("/logout/")

    for browser in (client, Client()):  # the same browser again, and an attacker's with the link
        replayed = browser.get(callback)
        assert replayed.status_code == 400
        assert "already used or has expired" in replayed.content.decode()
        assert signed_in_as(browser) is None
    assert AuditRecord.objects.filter(action="user.signed_in").count() == 1


def test_a_code_carried_to_another_sign_ins_state_fails_its_nonce(sso, idp):
    client = Client()
    first, second = start(client), start(client)
    callback = urlsplit(idp.sign_in(first, "alice"))
    code = parse_qs(callback.query)["code"][0]
    other_state = parse_qs(urlsplit(second).query)["state"][0]
    refused = client.get("/sso/callback/", {"code": code, "state": other_state})
    assert refused.status_code == 400
    assert signed_in_as(client) is None


def test_a_provider_cannot_sign_in_a_person_of_another_organisation_or_an_operator(sso, idp):
    """The attack: an organisation's admins run their provider, which can claim any address. It
    must not reach an account that another organisation, or the operators, answer for."""
    other = make_org("other")
    victim = make_user(other, username="victim", email="victim@acme.test")
    both = make_user(sso.org, username="both", email="both@acme.test")
    Membership.objects.create(org=other, user=both)
    User.objects.create_superuser("root", "root@acme.test", "a long enough secret")
    for email in ("victim@acme.test", "both@acme.test", "root@acme.test"):
        idp.set_accounts({"mallory": {**ALICE, "email": email, "groups": ["brain-admins"]}})
        client = Client()
        refused = sign_in(client, idp, "mallory")
        assert refused.status_code == 403, email
        assert signed_in_as(client) is None
    assert not Membership.objects.filter(org=sso.org, user=victim).exists()
    assert not AuditRecord.objects.filter(action="user.signed_in").exists()


def test_a_sign_in_started_for_an_organisation_without_single_sign_on_goes_nowhere(sso, idp):
    make_org("plain")
    refused = Client().get("/sso/plain/login/")
    assert refused.status_code == 400
    assert "no single sign-on" in refused.content.decode()


def test_password_sign_in_switched_off_leaves_the_break_glass_to_admins_and_operators(sso, idp):
    sso.password_sign_in = False
    sso.save()
    password = "a long enough secret"
    member = make_user(sso.org, username="mem", password=password)
    make_user(sso.org, role=Membership.ADMIN, username="adm", password=password)
    User.objects.create_superuser("root", "root@example.com", password)
    refused = Client().post("/login/", {"username": "mem", "password": password})
    assert refused.status_code == 200
    assert "signs in with Acme ID" in refused.content.decode()
    User.objects.filter(pk=member.pk).update(is_staff=True)  # an admin elsewhere is still a member here
    admin_refused = Client().post("/admin/login/", {"username": "mem", "password": password})
    assert admin_refused.status_code == 200
    assert "signs in with Acme ID" in admin_refused.content.decode()
    for name in ("adm", "root"):
        assert Client().post("/login/", {"username": name, "password": password}).status_code == 302, name


def test_the_login_page_offers_the_providers_and_keeps_the_page_asked_for(sso):
    page = Client().get("/login/?next=/oauth/authorize/%3Fclient_id%3Dx").content.decode()
    assert "Sign in with Acme ID" in page
    assert "/sso/acme/login/?next=%2Foauth%2Fauthorize%2F%3Fclient_id%3Dx" in page


def test_the_consent_for_an_assistant_continues_after_single_sign_on(sso, idp):
    client = Client()
    asked = "/oauth/authorize/?client_id=x&response_type=code"
    to_login = client.get(asked)
    assert to_login.status_code == 302
    assert to_login["Location"].startswith("/login/?next=")
    landed = sign_in(client, idp, next_url="/oauth/authorize/%3Fclient_id%3Dx%26response_type%3Dcode")
    assert landed["Location"] == asked


def test_signing_out_ends_the_session(sso, idp):
    client = Client()
    sign_in(client, idp)
    assert signed_in_as(client) is not None
    client.post("/logout/")
    assert signed_in_as(client) is None
    assert client.get("/account/")["Location"].startswith("/login/")


def test_a_provider_inside_the_operators_network_is_not_reached_unless_the_operator_allows_it(sso, idp, settings):
    settings.BRAIN_OUTBOUND_ALLOW = []  # the test provider is on loopback, which only the operator may allow
    refused = Client().get("/sso/acme/login/")
    assert refused.status_code == 503
    assert "could not be reached" in refused.content.decode()


def test_a_refusal_at_the_provider_is_shown_and_its_state_spent(sso, idp):
    client = Client()
    state = parse_qs(urlsplit(start(client)).query)["state"][0]
    said = {"state": state, "error": "access_denied", "error_description": "User is not assigned to the app"}
    refused = client.get("/sso/callback/", said)
    assert refused.status_code == 400
    assert "User is not assigned to the app" in refused.content.decode()
    assert "already used" in client.get("/sso/callback/", {"state": state, "code": "x"}).content.decode()


def test_a_deactivated_account_is_not_signed_in(sso, idp):
    alice = make_user(sso.org, username="alice", email="alice@acme.test")
    User.objects.filter(pk=alice.pk).update(is_active=False)
    client = Client()
    refused = sign_in(client, idp)
    assert refused.status_code == 403
    assert signed_in_as(client) is None
    assert not AuditRecord.objects.filter(action="user.signed_in").exists()


def test_two_organisations_on_one_provider_each_take_only_their_own_people(sso, idp):
    beta = make_org("beta")
    SingleSignOn.objects.create(
        org=beta,
        label="Beta ID",
        issuer=idp.issuer,
        client_id=idp.client_id,
        sealed_client_secret=seal_secret(idp.client_secret),
        scopes="openid email profile groups",
        allowed_domains=["beta.test", "acme.test"],  # beta's admins would take Acme's people too
        provision=SingleSignOn.DOMAIN,
    )
    idp.set_accounts({"alice": ALICE, "bea": {**ALICE, "email": "bea@beta.test"}})
    sign_in(Client(), idp)  # Alice joins Acme

    at_beta = Client()
    refused = at_beta.get(idp.sign_in(start(at_beta, "beta"), "alice"))
    assert refused.status_code == 403
    assert "belongs to other organisations" in refused.content.decode()
    assert signed_in_as(at_beta) is None
    assert not Membership.objects.filter(org=beta).exists()

    at_acme = Client()
    refused = at_acme.get(idp.sign_in(start(at_acme, "acme"), "bea"))
    assert refused.status_code == 403
    assert not Membership.objects.filter(org=sso.org, user__email="bea@beta.test").exists()


def test_with_several_organisations_the_login_page_names_none_and_asks_for_a_work_address(sso, idp):
    other = make_org("globex")
    page = Client().get("/login/").content.decode()
    assert "Acme" not in page
    assert "globex" not in page.casefold()
    assert 'name="email"' in page

    def continue_with(address: str, next_url: str = "") -> str:
        answer = Client().post("/sso/", {"email": address, "next": next_url})
        assert answer.status_code == 302
        return str(answer["Location"])

    assert continue_with("alice@acme.test", "/memory/") == "/sso/acme/login/?next=%2Fmemory%2F"
    assert continue_with("ALICE@ACME.TEST").startswith("/sso/acme/login/")
    nobody = continue_with("pat@unknown.test")
    assert nobody.startswith("/login/?sso=none")
    assert continue_with("not an address") == nobody
    assert "No company sign-in is set up for that address" in Client().get(nobody).content.decode()
    # A member found by their address, whatever its domain; two organisations answering is no answer.
    make_user(sso.org, username="contractor", email="dana@freelance.test")
    assert continue_with("dana@freelance.test").startswith("/sso/acme/login/")
    SingleSignOn.objects.create(
        org=other, label="Globex ID", issuer=idp.issuer, client_id="g", allowed_domains=["acme.test"]
    )
    assert continue_with("bob@acme.test") == nobody
    assert Client().get("/sso/").status_code == 405


def test_a_provider_that_redirects_its_discovery_elsewhere_is_not_followed(sso):
    """An admin's issuer answering with a redirect to the cloud's metadata service: Brain reads
    the redirect as a failure and never asks the address it names."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            asked.append(self.path)
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        SingleSignOn.objects.filter(pk=sso.pk).update(issuer=f"http://127.0.0.1:{server.server_port}/realm")
        refused = Client().get("/sso/acme/login/")
        assert refused.status_code == 503
        assert "could not read the sign-in provider" in refused.content.decode()
        assert asked == ["/realm/.well-known/openid-configuration"]
    finally:
        server.shutdown()
        server.server_close()
