"""The Connectors page in chromium: an admin adds a GitHub connection through the form, sees the
tools it gives assistants, grants its ACTION tool and withdraws it again, at desktop and phone
widths; the token pasted is never on the page again. The form asks for the chosen kind's fields
alone, each with its own control, and a failure reads in words in a box of its own."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from brain.models import Category, Features
from conftest import make_org, make_user
from connectors.models import Connection
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")  # a folder to keep screenshots in, when set


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


@pytest.mark.parametrize("width", [1280, 375])
def test_an_admin_chooses_a_kind_sees_only_its_fields_and_reads_a_failure_in_words(brain_url, width):
    org = make_org()
    make_user(org, role="admin", username=f"ida{width}", password=PASSWORD)
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    Connection.objects.create(
        org=org,
        kind="github",
        name="GitHub: the API",
        category=category,
        options={"repositories": ["acme/api"]},
        last_error="GitHub could not be reached (ConnectError); trying again later.",
    )
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 900})
        log_in(page, brain_url, f"ida{width}", PASSWORD, then="/connectors/")
        expect(page.get_by_role("button", name="Add the connection")).to_be_hidden()  # a kind first
        expect(page.get_by_role("button", name="Show its fields")).to_be_hidden()  # for pages without scripts

        page.get_by_label("Kind").select_option("imap")
        expect(page.get_by_label("Port (993 for TLS, 143 for STARTTLS)")).to_have_attribute("inputmode", "numeric")
        expect(page.locator("#id_imap-credential_host")).to_have_attribute("type", "text")
        expect(page.locator("#id_imap-credential_password")).to_have_attribute("type", "password")
        expect(page.get_by_label("Security", exact=True)).to_have_value("tls")  # a select, not a box to type in
        assert page.locator("#id_imap-option_folders").evaluate("e => e.tagName") == "TEXTAREA"
        expect(page.locator("#id_github-credential_token")).to_be_hidden()  # no other kind's fields
        expect(page.locator("#id_slack-credential_token")).to_be_hidden()

        page.get_by_label("Kind").select_option("sentry")
        expect(page.locator("#id_imap-credential_host")).to_be_hidden()
        assert page.locator("#id_sentry-option_organisation").evaluate("e => e.tagName") == "INPUT"

        error = page.locator(".connection-error")
        expect(error).to_contain_text("GitHub could not be reached from this Brain's server")
        expect(page.locator("main")).not_to_contain_text("ConnectError")
        # A box of its own: every line of its text inside the box, none crossed by its border.
        inside = error.evaluate(
            """e => { const box = e.getBoundingClientRect(), range = document.createRange();
            range.selectNodeContents(e);
            return [...range.getClientRects()].every(r => r.top >= box.top + 1 && r.bottom <= box.bottom - 1
              && r.left >= box.left + 1 && r.right <= box.right - 1) && getComputedStyle(e).display === "block"; }"""
        )
        assert inside
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if SHOTS and width > 1000:
            page.get_by_label("Kind").select_option("imap")
            page.screenshot(path=f"{SHOTS}/connectors.png", full_page=True)
