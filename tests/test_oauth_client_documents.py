"""Client metadata documents that Brain refuses (brain.oauth.fetcher): slow, huge, redirecting, at
an address the outbound rule refuses, not JSON, naming another client id, or with redirect
addresses dynamic registration would refuse. Each leaves no client behind, and the authorise page
answers as for an unknown client. A document is fetched from the address that was checked."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import Application

from brain.infra import outbound
from brain.oauth.fetcher import MetadataFetcher
from conftest import make_org, make_user
from tests.oauth_flow import REDIRECT, authorize_query, pkce
from tests.tls_server import dripping, tls_site

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path, settings):
    cache.clear()  # the toolkit backs off a failing URL for a minute; each test starts afresh
    with tls_site(tmp_path) as served:
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
    settings.BRAIN_OUTBOUND_ALLOW = []
    for refused in (url, url.replace("127.0.0.1", "localhost"), url.replace("127.0.0.1", "[::ffff:127.0.0.1]")):
        with pytest.raises(CIMDError, match="may not be reached"):
            MetadataFetcher().fetch(refused)
    assert site.asked == []  # refused before connecting
    with pytest.raises(CIMDError, match="https"):
        MetadataFetcher().fetch(url.replace("https://", "http://"))
    settings.BRAIN_OUTBOUND_ALLOW = ["127.0.0.1"]  # that address alone
    metadata, _age = MetadataFetcher().fetch(url)
    assert metadata["client_name"] == "Doc App"
    assert site.asked == ["/client.json"]


def test_the_document_is_fetched_from_the_address_that_was_checked(settings, monkeypatch):
    settings.BRAIN_OUTBOUND_ALLOW = []
    answers = iter([["93.184.216.34"], ["127.0.0.1"], ["127.0.0.1"]])  # public first, then loopback
    monkeypatch.setattr(outbound, "resolve", lambda host, port: next(answers))
    tried: list[tuple[str, int]] = []

    def refuse(address: tuple[str, int], timeout: float) -> socket.socket:
        tried.append(address)  # and nothing leaves this machine
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(outbound, "open_socket", refuse)
    with pytest.raises(CIMDError, match="could not fetch"):
        MetadataFetcher().fetch("https://client.example.com/client.json")
    assert tried == [("93.184.216.34", 443)]
    assert next(answers) == ["127.0.0.1"]  # asked once, not again before connecting


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
        settings.BRAIN_OUTBOUND_ALLOW = []
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
