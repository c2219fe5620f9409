"""A fresh install in a real browser: where admins and members land, what empty pages say to do
next, an invitation whose email cannot be sent (the link shown to copy, then sent again), the work
waiting for people, and the layout's skip link, marked menu item and folded menu on a phone."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect, sync_playwright

from brain.models import AuditRecord, Membership, Organisation
from brain.tests.admin_client import make_org_admin
from conftest import make_org, make_user
from overview.tests.overview_data import one_of_each_waiting
from tests.browser import ARGS, CHROMIUM, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def orm_beside_playwright() -> Iterator[None]:
    """Playwright keeps an event loop in this thread for the whole module; the ORM is still used
    from it, the test database's flush after each test included."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser(orm_beside_playwright: None) -> Iterator[Browser]:
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[object]:
    """Pages of their own (cookies, viewport) for the people of one test."""
    contexts = []

    def make(viewport: dict[str, int] = DESKTOP, javascript: bool = True) -> Page:
        context = browser.new_context(viewport=viewport, java_script_enabled=javascript)  # type: ignore[arg-type]
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15000)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def fresh_install() -> tuple[Organisation, User, User]:
    org = make_org()
    admin = make_org_admin(org, username="ada", password=PASSWORD)
    member = make_user(org, username="mo", password=PASSWORD)
    return org, admin, member


def open_home_and_log_in(page: Page, brain_url: str, username: str) -> None:
    page.goto(f"{brain_url}/")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_an_admin_lands_on_the_overview_with_next_steps_and_a_member_on_search(brain_url, fresh_install, new_page):
    org, _admin, _member = fresh_install
    admin_page, member_page = new_page(), new_page(PHONE)

    open_home_and_log_in(admin_page, brain_url, "ada")
    admin_page.wait_for_url(f"{brain_url}/overview/")
    steps = admin_page.get_by_role("region", name="Next steps")
    expect(steps.get_by_role("link", name="Add knowledge")).to_have_attribute("href", "/knowledge/add/")
    expect(steps.get_by_role("link", name="Connect an assistant")).to_have_attribute("href", "/connect/")
    settings_link = f"/admin/brain/organisation/{org.pk}/change/#features-group"
    expect(steps.get_by_role("link", name="switch on registers in its settings")).to_have_attribute(
        "href", settings_link
    )
    expect(steps.get_by_role("link", name="switch on jobs in its settings")).to_have_attribute("href", settings_link)
    admin_page.goto(f"{brain_url}/registers/")
    admin_page.get_by_role("link", name="switch on registers in its settings").click()
    expect(admin_page.locator("#id_features-0-contradictions")).to_be_visible()  # the organisation's switches

    open_home_and_log_in(member_page, brain_url, "mo")
    member_page.wait_for_url(f"{brain_url}/memory/search/")
    next_steps = member_page.locator("#next-steps")
    expect(next_steps).to_contain_text("memory has nothing you may read yet")
    next_steps.get_by_role("link", name="Add knowledge").click()
    member_page.wait_for_url(f"{brain_url}/knowledge/add/")
    for path, feature in (("/registers/", "Registers"), ("/jobs/", "Jobs")):
        member_page.goto(f"{brain_url}{path}")
        expect(member_page.get_by_text(f"{feature} are switched off for {org.name}.")).to_be_visible()
        expect(member_page.get_by_text(f"Ask an admin of {org.name} to switch them on")).to_be_visible()
        expect(member_page.get_by_role("link", name=re.compile("switch on"))).to_have_count(0)


def test_an_invitation_whose_email_cannot_go_shows_its_link_to_copy_and_can_be_sent_again(
    brain_url, fresh_install, new_page, settings
):
    org, _admin, _member = fresh_install
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing takes mail there
    page, without_script = new_page(PHONE), new_page(PHONE, javascript=False)

    def invite(on: Page) -> None:
        on.goto(f"{brain_url}/admin/brain/membership/invite/")
        on.get_by_label("Email address").fill("nina@example.com")
        on.get_by_role("button", name="Send the invitation").click()

    log_in(page, brain_url, "ada", PASSWORD)
    page.wait_for_url(f"{brain_url}/connect/")
    invite(page)
    expect(page.locator(".messagelist")).to_contain_text("the email could not be sent")
    shown = page.get_by_role("region", name="The link for nina@example.com")
    first = shown.locator("code").inner_text()
    assert "/invitation/" in first
    expect(shown.get_by_role("button", name="Copy link")).to_be_visible()
    page.reload()  # shown once
    expect(page.get_by_role("region", name="The link for nina@example.com")).to_have_count(0)

    log_in(without_script, brain_url, "ada", PASSWORD)
    without_script.wait_for_url(f"{brain_url}/connect/")
    invite(without_script)  # a second invitation of someone who has not accepted yet
    shown = without_script.get_by_role("region", name="The link for nina@example.com")
    second = shown.locator("code").inner_text()  # the link is text to select, with no script to copy it
    expect(shown.get_by_role("button", name="Copy link")).to_be_hidden()
    assert "/invitation/" in second

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    invite(page)
    expect(page.locator(".messagelist")).to_contain_text("Invitation sent again to nina@example.com")

    page.goto(second.replace(settings.BRAIN_BASE_URL, brain_url))
    expect(page.get_by_role("heading", name="Welcome to Brain")).to_be_visible()
    assert Membership.objects.filter(org=org, user__email="nina@example.com").count() == 1
    assert AuditRecord.objects.filter(org=org, action="member.invited").count() == 3


def test_the_overview_and_the_admin_index_open_with_what_needs_you(brain_url, fresh_install, new_page):
    org, _admin, member = fresh_install
    one_of_each_waiting(org, requester=member)
    page = new_page()

    open_home_and_log_in(page, brain_url, "ada")
    page.wait_for_url(f"{brain_url}/overview/")
    needs = page.get_by_role("region", name="Needs you")
    expect(needs.get_by_role("link")).to_have_text(
        [
            "1 skill version to review",
            "1 contradiction to answer",
            "1 request waiting for an answer",
            "1 document that failed",
        ]
    )
    where = {
        "1 skill version to review": ("/admin/skills/skillversion/", "Onboarding"),
        "1 contradiction to answer": ("/admin/registers/contradiction/", "price"),
        "1 request waiting for an answer": ("/admin/contacts/humanrequest/", "Farah"),
        "1 document that failed": ("/overview/", "Q3 board pack"),
    }
    for words, (path, shows) in where.items():
        page.goto(f"{brain_url}/admin/")
        page.get_by_role("region", name="Needs you").get_by_role("link", name=words).click()
        page.wait_for_url(re.compile(re.escape(f"{brain_url}{path}")))
        shown = (
            page.locator("#result_list") if path.startswith("/admin/") else page.get_by_role("region", name="Documents")
        )
        expect(shown.first).to_contain_text(shows)

    quiet = new_page()
    make_org_admin(make_org(), username="quiet", password=PASSWORD)
    log_in(quiet, brain_url, "quiet", PASSWORD)
    quiet.goto(f"{brain_url}/admin/")
    expect(quiet.get_by_role("region", name="Needs you")).to_contain_text("Nothing is waiting for you.")


def test_a_phone_gets_a_skip_link_a_folded_menu_and_the_current_page_marked(brain_url, fresh_install, new_page):
    page = new_page(PHONE)
    log_in(page, brain_url, "mo", PASSWORD)
    page.wait_for_url(f"{brain_url}/connect/")
    page.goto(f"{brain_url}/registers/")

    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the main content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()

    menu = page.get_by_role("navigation", name="Main")
    expect(menu.get_by_role("link", name="Registers")).to_be_hidden()
    expect(page.get_by_text("Menu", exact=True)).to_be_visible()
    menu_link(page, "Registers")
    expect(menu.get_by_role("link", name="Registers")).to_be_visible()
    expect(menu.locator('[aria-current="page"]')).to_have_text("Registers")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    page.goto(f"{brain_url}/no/such/page/")  # an error page has the same layout
    expect(page.get_by_role("link", name="Skip to the main content")).to_be_attached()
    expect(page.get_by_role("heading", name="This page does not exist")).to_be_visible()


def test_a_desktop_shows_the_whole_menu_the_current_page_and_a_focus_ring(brain_url, fresh_install, new_page):
    page = new_page(DESKTOP)
    log_in(page, brain_url, "mo", PASSWORD)
    page.wait_for_url(f"{brain_url}/connect/")
    page.goto(f"{brain_url}/memory/search/")

    menu = page.get_by_role("navigation", name="Main")
    expect(page.get_by_text("Menu", exact=True)).to_be_hidden()
    expect(menu.get_by_role("link", name="Jobs")).to_be_visible()
    expect(menu.locator('[aria-current="page"]')).to_have_text("Search")
    field = page.get_by_label("Search for")
    field.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focus from the keyboard, as :focus-visible wants
    outline = field.evaluate("e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth")
    assert outline == "solid 3px"
