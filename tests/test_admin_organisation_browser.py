"""An organisation added in the admin, in a real browser, is one its members can save knowledge to."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from brain.core.services import add_member
from brain.models import Category, Features, Organisation
from conftest import make_org, make_token, make_user
from memory.models import Document
from tests.browser import browser_page, log_in
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    # Playwright's sync API keeps an event loop running in this thread; the ORM calls here are synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_an_organisation_added_in_the_admin_takes_knowledge_over_mcp(brain_url):
    operator = make_user(make_org(), username="olu", password=PASSWORD)
    operator.is_staff = operator.is_superuser = True
    operator.save(update_fields=["is_staff", "is_superuser"])

    with browser_page() as page:
        log_in(page, brain_url, "olu", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/admin/brain/organisation/add/")
        page.get_by_label("Name").fill("Harbour Freight")
        page.get_by_label("Slug").fill("harbour-freight")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator(".messagelist")).to_contain_text("was added successfully")

    org = Organisation.objects.get(slug="harbour-freight")
    assert Features.objects.filter(org=org).exists()  # its switches can be changed in the admin at once
    member = make_user()
    add_member(org=org, user=member)
    saved = call(
        brain_url,
        make_token(org, member).plaintext,
        "add_company_knowledge",
        {"title": "Depots", "content": "Harbour Freight runs depots in Leith and Hull."},
    )
    assert not saved.is_error, saved.content[0].text
    assert saved.structured_content["title"] == "Depots"
    assert Document.objects.get(org=org).category.slug == Category.DEFAULT_SLUG
