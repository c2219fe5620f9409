"""Client metadata documents that Brain refuses (brain.oauth.fetcher): slow, huge, redirecting, at
a private address the operator did not allow, not JSON, naming another client id, or with
redirect addresses dynamic registration would refuse. Each leaves no client behind, and the
authorise page answers as for an unknown client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import Application

from brain.oauth.fetcher import MetadataFetcher
from conftest import make_org, make_user
from tests.oauth_flow import REDIRECT, authorize_query, pkce
from tests.tls_server import dripping, tls_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path, settings):
    cache.clear()  # the toolkit backs off a failing URL for a minute; each test starts afresh
    with tls_site(tmp_path) as served:
        settings.BRAIN_OAUTH_METADATA_PRIVATE_HOSTS = ["127.0.0.1"]
        settings.BRAIN_OAUTH_METADATA_CA_FILE = str(served.cert)
        settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_FETCH_TIMEOUT_SECONDS": 1}
        yield served


def document(client_id: str, **changes: object) -> bytes:
    body: dict[str, Any] = {
        "client_id": client_id,
        "client_name": "Doc App",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    body.update(changes)
    return json.dumps(body).encode()


JSON = {"Content-Type": "application/json"}


def test_a_good_document_is_read(site):
    url = f"{site.base}/good.json"
    site.routes["/good.json"] = (200, JSON, document(url))
    metadata, _age = MetadataFetcher().fetch(url)
    assert metadata["client_name"] == "Doc App"


@pytest.mark.parametrize(
    ("route", "why"),
    [
        ((200, JSON, dripping), "too slowly|could not fetch"),
        ((200, JSON, b"{" + b" " * 10_000 + b"}"), "maximum allowed size"),
        ((302, {"Location": "https://127.0.0.1/elsewhere.json"}, b""), "HTTP 302"),
        ((200, {"Content-Type": "text/html"}, b"<html></html>"), "not JSON"),
        ((200, JSON, b"[1, 2]"), "JSON object"),
        ((404, JSON, b"{}"), "HTTP 404"),
    ],
    ids=["slow", "huge", "redirect", "html", "array", "missing"],
)
def test_bad_answers_are_refused(site, route, why):
    site.routes["/client.json"] = route
    with pytest.raises(CIMDError, match=why):
        MetadataFetcher().fetch(f"{site.base}/client.json")


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "plain http"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "never redirects"),
        ({"grant_types": ["client_credentials"]}, "grant_types"),
    ],
)
def test_documents_asking_what_registration_refuses_are_refused(site, changes, why):
    url = f"{site.base}/client.json"
    site.routes["/client.json"] = (200, JSON, document(url, **changes))
    with pytest.raises(CIMDError, match=why):
        MetadataFetcher().fetch(url)


def test_a_private_address_is_refused_unless_the_operator_allows_it(site, settings):
    url = f"{site.base}/client.json"
    site.routes["/client.json"] = (200, JSON, document(url))
    settings.BRAIN_OAUTH_METADATA_PRIVATE_HOSTS = []
    with pytest.raises(CIMDError, match="non-public address"):
        MetadataFetcher().fetch(url)
    with pytest.raises(CIMDError, match="https"):
        MetadataFetcher().fetch(url.replace("https://", "http://"))


def test_an_untrusted_certificate_is_refused(site, settings):
    url = f"{site.base}/client.json"
    site.routes["/client.json"] = (200, JSON, document(url))
    settings.BRAIN_OAUTH_METADATA_CA_FILE = ""
    with pytest.raises(CIMDError, match="could not fetch"):
        MetadataFetcher().fetch(url)


@pytest.mark.parametrize("kind", ["slow", "other id", "private"])
def test_the_authorise_page_refuses_and_no_client_is_made(site, settings, kind):
    url = f"{site.base}/client.json"
    if kind == "slow":
        site.routes["/client.json"] = (200, JSON, dripping)
    elif kind == "other id":
        site.routes["/client.json"] = (200, JSON, document(f"{site.base}/someone-else.json"))
    else:
        site.routes["/client.json"] = (200, JSON, document(url))
        settings.BRAIN_OAUTH_METADATA_PRIVATE_HOSTS = []
    org = make_org()
    person = Client()
    person.force_login(make_user(org))
    answer = person.get(authorize_query(url, pkce(), f"{settings.BRAIN_BASE_URL}/mcp"))
    assert answer.status_code == 400
    assert b"client_id" in answer.content
    assert "Location" not in answer
    assert not Application.objects.exists()


def test_metadata_documents_can_be_switched_off(site, settings):
    url = f"{site.base}/client.json"
    site.routes["/client.json"] = (200, JSON, document(url))
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": False}
    settings.BRAIN_OAUTH_CLIENT_METADATA = False
    person = Client()
    person.force_login(make_user(make_org()))
    assert person.get(authorize_query(url, pkce(), f"{settings.BRAIN_BASE_URL}/mcp")).status_code == 400
    assert (
        Client().get("/.well-known/oauth-authorization-server").json()["client_id_metadata_document_supported"] is False
    )
