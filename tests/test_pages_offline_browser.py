"""Every page Brain serves works on a machine with no network: a real browser records each request a
page makes (scripts, styles, fonts, images, the schema the API docs load, their workers) and none
may go anywhere but this machine."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from brain.core.services import mark_memory_built
from brain.models import Membership
from brain.tests.admin_client import make_org_admin
from conftest import make_org
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
# Each page, and something on it that shows it was drawn (the API docs draw themselves from the schema).
PAGES = {
    "/": ("heading", "Overview"),  # an admin lands on the overview
    "/connect/": ("heading", "Connect an assistant"),
    "/requests/": ("heading", "My requests"),
    "/api/v1/docs/": ("text", "Brain API"),
    "/api/v1/redoc/": ("text", "Brain API"),
    "/admin/": ("heading", "Brain administration"),
    "/memory/search/": ("heading", "Search"),
    "/memory/mine/": ("heading", "My memories"),
    "/memory/review/": ("heading", "To review"),
    "/knowledge/add/": ("heading", "Add knowledge"),
    "/overview/": ("heading", "Overview"),
}


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def leaves_the_machine(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-extension"):
        return False
    host = parts.hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # any other name is another machine


def test_loopback_is_told_apart_from_everything_else():
    assert not leaves_the_machine("http://127.0.0.1:8000/static/brain/brain.css")
    assert not leaves_the_machine("http://[::1]:8000/")
    assert not leaves_the_machine("data:image/svg+xml;base64,AAAA")
    assert leaves_the_machine("https://fonts.googleapis.com/css2?family=Roboto")
    assert leaves_the_machine("https://cdn.redoc.ly/redoc/logo-mini.svg")
    assert leaves_the_machine("http://10.0.0.8/")


def test_no_page_asks_anything_of_another_machine(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    make_org_admin(org, username="ada", password=PASSWORD)
    assert Membership.objects.get(org=org, user__username="ada").role == Membership.ADMIN
    seen: dict[str, list[str]] = {}
    where = ["/login/"]

    with browser_page() as page:
        page.context.on("request", lambda request: seen.setdefault(where[0], []).append(request.url))
        page.goto(f"{brain_url}/login/")
        page.wait_for_load_state("networkidle")
        log_in(page, brain_url, "ada", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        for path, (kind, name) in PAGES.items():
            where[0] = path
            page.goto(f"{brain_url}{path}")
            shown = page.get_by_role("heading", name=name) if kind == "heading" else page.get_by_text(name).first
            expect(shown).to_be_visible()
            page.wait_for_load_state("networkidle")

    outside = {path: [url for url in urls if leaves_the_machine(url)] for path, urls in seen.items()}
    assert {path: urls for path, urls in outside.items() if urls} == {}
    assert set(seen) == {"/login/", *PAGES}
    assert any(url.startswith(f"{brain_url}/api/v1/schema/") for url in seen["/api/v1/redoc/"])
    assert any("favicon.svg" in url for url in seen["/connect/"])
