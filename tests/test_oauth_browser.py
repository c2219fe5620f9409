"""An assistant that connects by URL alone, end to end: the official MCP SDK's OAuth client
provider against the live server, finding the authorisation server from the 401, registering
itself (or naming a metadata document served over HTTPS on loopback), sending the person to the
consent page, which a real chromium approves, then calling tools, refreshing, and losing access
once its token is revoked."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from django.core.cache import cache
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from playwright.sync_api import Page, Route
from pydantic import AnyUrl

from brain.core.services import mark_memory_built
from brain.models import ApiToken
from conftest import make_org, make_user
from tests.browser import browser_page, log_in
from tests.tls_server import tls_site

pytestmark = pytest.mark.django_db(transaction=True)

CALLBACK = "http://127.0.0.1:7654/callback"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")  # a folder to keep screenshots in, when set


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class Storage:
    """What an assistant keeps between calls: its registration and its tokens."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def assistant(
    base: str,
    storage: Storage,
    urls: queue.Queue[str],
    codes: queue.Queue[AuthorizationCodeResult],
    metadata_url: str | None,
) -> dict[str, Any]:
    """The assistant's side: connect, call a tool, let its access token's hour pass, call again."""

    async def redirect_handler(url: str) -> None:
        urls.put(url)

    async def callback_handler() -> AuthorizationCodeResult:
        return await asyncio.to_thread(codes.get)

    provider = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="SDK Assistant",
            redirect_uris=[AnyUrl(CALLBACK)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=metadata_url,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=60) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        first = await session.call_tool("get_profile", {})
        before = storage.tokens
        provider.context.token_expiry_time = time.time() - 1  # the access token's hour is over
        second = await session.call_tool("get_profile", {})
        return {"first": first, "second": second, "before": before, "after": storage.tokens}


def approve_in_browser(page: Page, urls: queue.Queue[str], journey: Future[Any]) -> str:
    """Wait for the assistant to send the person to Brain, allow it there, and return where the
    browser was sent back to."""
    while True:
        try:
            url = urls.get(timeout=0.5)
            break
        except queue.Empty:
            if journey.done():
                journey.result()  # the assistant failed before asking: raise its error
                raise AssertionError("the assistant finished without asking for consent") from None
    landed: list[str] = []

    def back_at_the_app(route: Route) -> None:
        landed.append(route.request.url)
        route.fulfill(status=200, body="You may close this window.")

    page.route(f"{CALLBACK}**", back_at_the_app)
    page.goto(url)
    assert page.get_by_text("the name the app gave itself; Brain has not verified it").is_visible()
    page.get_by_label("Read and write: also save shared knowledge as you").check()
    if SHOTS:
        page.set_viewport_size({"width": 1000, "height": 760})
        page.screenshot(path=f"{SHOTS}/oauth-consent.png", full_page=True)
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(f"{CALLBACK}**")
    return landed[0]


def connect_by_url(base: str, page: Page, metadata_url: str | None = None) -> tuple[Storage, dict[str, Any]]:
    storage: Storage = Storage()
    urls: queue.Queue[str] = queue.Queue()
    codes: queue.Queue[AuthorizationCodeResult] = queue.Queue()
    with ThreadPoolExecutor(max_workers=1) as pool:
        journey = pool.submit(asyncio.run, assistant(base, storage, urls, codes, metadata_url))
        back = approve_in_browser(page, urls, journey)
        sent = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
        codes.put(AuthorizationCodeResult(code=sent["code"], state=sent.get("state"), iss=sent.get("iss")))
        return storage, journey.result()


def assert_connected_and_refreshed(base: str, storage: Storage, outcome: dict[str, Any], org_name: str) -> None:
    assert not outcome["first"].is_error
    assert not outcome["second"].is_error
    assert outcome["first"].structured_content["organisation"] == org_name
    before, after = outcome["before"], outcome["after"]
    assert after.access_token != before.access_token
    assert after.refresh_token != before.refresh_token
    # Revocation (RFC 7009) takes effect on the next call.
    assert storage.client is not None
    revoked = httpx.post(
        f"{base}/oauth/revoke/", data={"token": after.access_token, "client_id": storage.client.client_id}
    )
    assert revoked.status_code == 200
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    denied = httpx.post(f"{base}/mcp", json=listed, headers={"Authorization": f"Bearer {after.access_token}"})
    assert denied.status_code == 401


@pytest.fixture
def member(brain_url, settings):
    settings.BRAIN_BASE_URL = brain_url
    cache.clear()  # registrations are counted per address in the cache
    org = make_org()
    mark_memory_built(org=org)
    make_user(org, username="priya", password="a long enough secret")
    return org


def test_an_assistant_registers_itself_and_connects_by_url(brain_url, member):
    with browser_page() as page:
        log_in(page, brain_url, "priya", "a long enough secret", then="/connect/apps/")
        storage, outcome = connect_by_url(brain_url, page)
        assert_connected_and_refreshed(brain_url, storage, outcome, member.name)
        page.goto(f"{brain_url}/connect/apps/")
        row = page.get_by_role("row", name="SDK Assistant")
        assert "Read and write" in row.inner_text()
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/connected-apps.png", full_page=True)
    assert ApiToken.objects.get(prefix="app").name == "SDK Assistant"


def test_an_assistant_named_by_a_metadata_document_connects(brain_url, member, settings, tmp_path):
    with tls_site(tmp_path) as site:
        client_id = f"{site.base}/assistant/client.json"
        document = {
            "client_id": client_id,
            "client_name": "Documented Assistant",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        site.routes["/assistant/client.json"] = (
            200,
            {"Content-Type": "application/json"},
            json.dumps(document).encode(),
        )
        settings.BRAIN_OAUTH_METADATA_CA_FILE = str(site.cert)
        with browser_page() as page:
            log_in(page, brain_url, "priya", "a long enough secret", then="/connect/apps/")
            storage, outcome = connect_by_url(brain_url, page, metadata_url=client_id)
            assert storage.client is not None
            assert storage.client.client_id == client_id
            assert_connected_and_refreshed(brain_url, storage, outcome, member.name)
    assert ApiToken.objects.get(prefix="app").name == "Documented Assistant"


def test_the_consent_page_and_connected_apps_fit_a_phone(brain_url, member):
    from django.contrib.auth.models import User
    from oauth2_provider.models import Application

    from brain.oauth.connections import connect_app
    from tests.oauth_flow import authorize_query, pkce

    long_name = "Assistant-for-the-infrastructure-and-platform-engineering-teams-of-the-second-floor"
    registered = httpx.post(
        f"{brain_url}/oauth/register/",
        json={"client_name": long_name, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"},
    ).json()
    connect_app(
        user=User.objects.get(username="priya"),
        org=member,
        application=Application.objects.get(client_id=registered["client_id"]),
        access="personal",
    )
    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "priya", "a long enough secret", then="/connect/apps/")
        page.wait_for_url(f"{brain_url}/connect/apps/")
        for path in ("/connect/apps/", authorize_query(registered["client_id"], pkce(), f"{brain_url}/mcp")):
            page.goto(f"{brain_url}{path}")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 375, f"{path} is {width} px wide"
