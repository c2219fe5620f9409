"""Connect an assistant, in a real browser: create a token, use it, copy it, revoke it; a reload
never issues a second token, and revoking asks first."""

from __future__ import annotations

import pytest
from playwright.sync_api import Dialog, expect

from brain.core.services import authenticate_token, mark_memory_built
from brain.models import ApiToken
from conftest import make_org, make_user
from tests.browser import browser_page, log_in
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    # Playwright's sync API keeps an event loop running in this thread; the ORM calls here are synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_a_user_creates_a_token_copies_its_configuration_and_revokes_it(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    make_user(org, username="priya", password="a long enough secret")
    with browser_page() as page:
        log_in(page, brain_url, "priya", "a long enough secret")
        assert page.get_by_role("heading", name="Connect an assistant").is_visible()
        page.get_by_label("Name (which assistant or device it is for)").fill("Claude on my laptop")
        page.get_by_label("Access").select_option("write")
        page.get_by_role("button", name="Create token").click()
        plaintext = page.locator("#token-value").inner_text().strip()
        assert plaintext.startswith("brn_")
        assert "claude mcp add --transport http brain" in page.locator("pre").first.inner_text()
        assert plaintext in page.locator("pre").first.inner_text()
        token = ApiToken.objects.get(name="Claude on my laptop")
        assert token.scopes == ["read", "write"]
        assert authenticate_token(plaintext) is not None
        assert not call(brain_url, plaintext, "get_profile").is_error

        page.goto(f"{brain_url}/connect/")
        assert plaintext not in page.content()  # shown once only
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name=f"Revoke {token}").click()
        assert page.get_by_role("status").first.inner_text().startswith("Token")
        page.get_by_text("Revoked and expired tokens (1)").click()
        assert page.locator("td .status-inactive").first.inner_text() == "revoked"
    assert authenticate_token(plaintext) is None


def test_the_connect_page_needs_a_login_and_hides_other_users_tokens(brain_url):
    org = make_org()
    make_user(org, username="sam", password="a long enough secret")
    other = make_user(org, username="kim", password="a long enough secret")
    from conftest import make_token

    theirs = make_token(org, user=other, name="kim's laptop")
    with browser_page() as page:
        page.goto(f"{brain_url}/connect/")
        assert "/login/" in page.url
        log_in(page, brain_url, "sam", "a long enough secret")
        assert "kim's laptop" not in page.content()
        assert theirs.token.prefix not in page.content()
        response = page.request.post(f"{brain_url}/connect/tokens/{theirs.token.pk}/revoke/")
        assert response.status in (403, 302, 200)
    assert authenticate_token(theirs.plaintext) is not None


def create_token_on_the_page(page, name: str) -> str:
    page.get_by_label("Name (which assistant or device it is for)").fill(name)
    page.get_by_role("button", name="Create token").click()
    return page.locator("#token-value").inner_text().strip()


def test_reloading_the_page_after_creating_a_token_issues_no_second_one(brain_url):
    org = make_org()
    user = make_user(org, username="rhea", password="a long enough secret")
    with browser_page() as page:
        log_in(page, brain_url, "rhea", "a long enough secret")
        plaintext = create_token_on_the_page(page, "Desk")
        assert page.url == f"{brain_url}/connect/"  # redirected: the address holds no form to send again
        page.reload()
        expect(page.get_by_role("heading", name="Your tokens")).to_be_visible()
        assert plaintext not in page.content()
        page.go_back()
        page.go_forward()
        assert ApiToken.objects.filter(user=user).count() == 1
        assert plaintext not in page.content()


def test_revoking_asks_first_and_keeps_the_token_when_the_answer_is_no(brain_url):
    org = make_org()
    user = make_user(org, username="tove", password="a long enough secret")
    from conftest import make_token

    issued = make_token(org, user=user, name="Laptop")
    asked: list[str] = []

    def answer(reply: bool):
        def handle(dialog: Dialog) -> None:
            asked.append(dialog.message)
            dialog.accept() if reply else dialog.dismiss()

        return handle

    with browser_page() as page:
        log_in(page, brain_url, "tove", "a long enough secret")
        page.once("dialog", answer(False))
        page.get_by_role("button", name=f"Revoke {issued.token}").click()
        expect(page.get_by_role("button", name=f"Revoke {issued.token}")).to_be_visible()
        assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is None
        page.once("dialog", answer(True))
        page.get_by_role("button", name=f"Revoke {issued.token}").click()
        expect(page.get_by_text(f"Token {issued.token} revoked.")).to_be_visible()
    assert (
        asked
        == [f"Revoke {issued.token}? Assistants using it lose access at once, and it cannot be turned back on."] * 2
    )
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None


def test_without_the_script_revoking_asks_on_a_page_of_its_own(brain_url):
    org = make_org()
    user = make_user(org, username="uma", password="a long enough secret")
    from conftest import make_token

    issued = make_token(org, user=user, name="Laptop")
    with browser_page() as page:
        page.route("**/static/brain/brain.js", lambda route: route.abort())
        log_in(page, brain_url, "uma", "a long enough secret")
        page.get_by_role("button", name=f"Revoke {issued.token}").click()
        expect(page.get_by_role("heading", name="Revoke this token?")).to_be_visible()
        assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is None
        page.get_by_role("button", name=f"Revoke {issued.token}").click()
        expect(page.get_by_text(f"Token {issued.token} revoked.")).to_be_visible()
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None


@pytest.mark.parametrize("clipboard_api", [True, False], ids=["clipboard", "fallback"])
def test_the_copy_buttons_copy_the_token_and_each_configuration(brain_url, clipboard_api):
    org = make_org()
    make_user(org, username="vic", password="a long enough secret")
    with browser_page() as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=brain_url)
        if not clipboard_api:  # as on a plain-HTTP address other than loopback, where there is no clipboard API
            page.add_init_script(
                "window.keptClipboard = navigator.clipboard;"
                "Object.defineProperty(navigator, 'clipboard', {value: undefined});"
            )
        log_in(page, brain_url, "vic", "a long enough secret")
        plaintext = create_token_on_the_page(page, "Desk")
        page.get_by_role("button", name="Copy token").click()
        expect(page.get_by_text("Copied.")).to_be_visible()
        assert clipboard(page) == plaintext
        page.get_by_role("button", name="Copy the Cursor configuration").click()
        assert plaintext in clipboard(page)
        assert '"mcpServers"' in clipboard(page)


def clipboard(page) -> str:
    # The fallback test hid the clipboard API from the page's script; the test reads through the copy it kept.
    return str(page.evaluate("(window.keptClipboard || navigator.clipboard).readText()"))
