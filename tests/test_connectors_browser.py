"""The Connectors page in chromium: an admin adds a GitHub connection through the form, sees the
tools it gives assistants, grants its ACTION tool and withdraws it again, at desktop and phone
widths; the token pasted is never on the page again."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from brain.models import Features
from conftest import make_org, make_user
from connectors.models import Connection
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.mark.parametrize("width", [1280, 375])
def test_an_admin_adds_a_connection_and_grants_its_action(brain_url, width):
    org = make_org()
    make_user(org, role="admin", username=f"ada{width}", password=PASSWORD)
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 900})
        log_in(page, brain_url, f"ada{width}", PASSWORD, then="/connectors/")
        page.wait_for_url(f"{brain_url}/connectors/")
        page.get_by_label("Kind").select_option("github")
        page.get_by_label("Name", exact=True).fill("GitHub: the API")
        page.locator("#id_github-credential_token").fill("ghp_never_shown_again")
        page.locator("#id_github-option_repositories").fill("acme/api")
        page.get_by_role("button", name="Add the connection").click()
        expect(page.get_by_text("GitHub: the API is added")).to_be_visible()
        assert "ghp_never_shown_again" not in page.content()

        page.get_by_text("Tools for assistants").click()
        expect(page.get_by_text("github_search_pull_requests")).to_be_visible()
        expect(page.get_by_text("off until you grant it")).to_be_visible()
        page.get_by_role("button", name="Grant github_comment on GitHub: the API").click()
        expect(page.get_by_text("Assistants may now use github_comment through GitHub: the API.")).to_be_visible()
        assert Connection.objects.get(org=org).granted_tools == ["github_comment"]
        assert "grant:github_comment" in Features.objects.get(org=org).connected
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        page.get_by_text("Tools for assistants").click()
        page.get_by_role("button", name="Withdraw github_comment on GitHub: the API").click()
        expect(page.get_by_text("Assistants may no longer use github_comment through GitHub: the API.")).to_be_visible()
        assert Connection.objects.get(org=org).granted_tools == []
