"""Connect an assistant, in a real browser: create a token, use it, revoke it."""

from __future__ import annotations

import pytest

from brain.models import ApiToken
from brain.services import authenticate_token, mark_memory_built
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
        page.get_by_role("button", name=f"Revoke {token}").click()
        assert page.get_by_role("status").first.inner_text().startswith("Token")
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
