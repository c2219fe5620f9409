"""The account page and the menu in a real browser: a member changes their name, time zone and
password and makes and revokes a token of their own; the menu links the account page on every
page and the Django admin for those it lets in, is one line at 1280 px and folds at 375 px.
BRAIN_SCREENSHOTS names a folder to keep screenshots in (docs/screenshots for the docs)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect, sync_playwright

from brain.core.accounts import get_time_zone
from brain.models import ApiToken, Organisation
from brain.tests.admin_client import make_org_admin
from conftest import make_org, make_user
from tests.browser import ARGS, CHROMIUM, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a long enough secret"
NEW_PASSWORD = "another long secret 9"
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")
# Pages whose menu must be one line for the person with the most links (an operator who is also
# an organisation admin: Overview, Connectors and Admin besides every member's links).
PAGES = ["/memory/search/", "/registers/", "/account/", "/connect/", "/overview/", "/jobs/"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright keeps an event loop in this thread; the ORM is still used from it.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as pw:
            launched = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                yield launched
            finally:
                launched.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[object]:
    contexts = []

    def make(viewport: dict[str, int] = DESKTOP) -> Page:
        context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15000)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def people() -> tuple[Organisation, User, User]:
    org = make_org()
    member = make_user(org, username="mo", password=PASSWORD)
    admin = make_org_admin(org, username="ada", password=PASSWORD)
    admin.is_superuser = True  # an operator too: the longest menu there is
    admin.save(update_fields=["is_superuser"])
    return org, member, admin


def test_a_member_changes_their_account_and_tokens_from_the_menu(brain_url, people, new_page):
    org, member, _admin = people
    page = new_page(DESKTOP)
    log_in(page, brain_url, "mo", PASSWORD, then="/memory/search/")
    page.wait_for_url(f"{brain_url}/memory/search/")
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin")).to_have_count(0)
    menu_link(page, "Account").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()

    page.get_by_label("First name").fill("Mo")
    page.get_by_label("Last name").fill("Salah")
    page.get_by_label("Time zone", exact=True).select_option("Asia/Tokyo")
    page.get_by_role("button", name="Save name and time zone").click()
    expect(page.get_by_text("Your name and time zone are saved.")).to_be_visible()
    expect(page.get_by_label("Time zone", exact=True)).to_have_value("Asia/Tokyo")
    member.refresh_from_db()
    assert (member.first_name, member.last_name, get_time_zone(user=member)) == ("Mo", "Salah", "Asia/Tokyo")

    page.get_by_label("Old password", exact=True).fill(PASSWORD)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("Your password is changed.")).to_be_visible()
    member.refresh_from_db()
    assert member.check_password(NEW_PASSWORD)

    page.get_by_label("Name (which assistant or device it is for)").fill("phone")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("#token-value")).to_contain_text("brn_")
    token = ApiToken.objects.get(user=member)
    row = page.get_by_role("row").filter(has_text=f"brn_{token.prefix}")
    expect(row).to_contain_text("Asia/Tokyo")  # times in the zone the member chose
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/account.png", full_page=True)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Revoke brn_{token.prefix}").click()
    page.wait_for_url(f"{brain_url}/account/")
    expect(page.get_by_text("revoked. Assistants using it are disconnected.")).to_be_visible()
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_the_menu_is_one_line_at_1280_px_and_links_the_django_admin(brain_url, people, new_page):
    page = new_page(DESKTOP)
    log_in(page, brain_url, "ada", PASSWORD, then="/memory/search/")
    page.wait_for_url(f"{brain_url}/memory/search/")
    for path in PAGES:
        page.goto(f"{brain_url}{path}")
        menu = page.get_by_role("navigation", name="Main")
        expect(menu.get_by_role("link", name="Admin")).to_have_attribute("href", "/admin/")
        expect(menu.get_by_role("link", name="Account")).to_have_attribute("href", "/account/")
        line = menu.get_by_role("link", name="Search").bounding_box()
        header = page.locator("header").bounding_box()
        assert line is not None
        assert header is not None
        nav = menu.bounding_box()
        assert nav is not None
        # One line: the menu is as tall as one of its links, and the header holds one row (brand,
        # menu and the log-out button side by side), not three.
        assert nav["height"] < 1.5 * line["height"], (path, nav, line)
        tops = [
            box["y"]
            for box in (page.locator(".brand").bounding_box(), nav, page.locator("header form").bounding_box())
            if box
        ]
        assert max(tops) - min(tops) < line["height"], (path, tops)
        assert header["height"] < 3 * line["height"], (path, header)
        assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    if SHOTS:
        page.goto(f"{brain_url}/memory/search/")
        page.screenshot(path=f"{SHOTS}/menu-1280.png", clip={"x": 0, "y": 0, "width": 1280, "height": 120})
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").click()
    page.wait_for_url(f"{brain_url}/admin/")  # let in, not sent to a login


def test_the_menu_folds_at_375_px_and_still_reaches_the_account_page(brain_url, people, new_page):
    page = new_page(PHONE)
    log_in(page, brain_url, "ada", PASSWORD, then="/memory/search/")
    page.wait_for_url(f"{brain_url}/memory/search/")
    menu = page.get_by_role("navigation", name="Main")
    expect(menu.get_by_role("link", name="Account")).to_be_hidden()
    expect(page.get_by_role("button", name="Log out ada")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    link = menu_link(page, "Account")
    expect(link).to_be_visible()
    expect(menu.get_by_role("link", name="Admin")).to_be_visible()
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/menu-375.png", full_page=False)
    link.click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
