"""Brain's pages on a 375 px wide phone: nothing is wider than the screen, so nothing scrolls
sideways, with long names, long questions, a new token's configurations and folded tables."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from brain.models import ApiToken
from conftest import make_org, make_token, make_user
from contacts.models import Contact, HumanRequest
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
WIDTH = 375


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url} is {width} px wide"


def test_every_page_fits_a_375_pixel_screen(brain_url):
    org = make_org()
    user = make_user(org, username="wen", password=PASSWORD, first_name="Wen")
    long_name = "Claude Code on the shared build machine in the second-floor meeting room"
    for n in range(3):
        make_token(org, user=user, name=f"{long_name} {n}")
    revoked = make_token(org, user=user, name="Old laptop")
    ApiToken.objects.filter(pk=revoked.token.pk).update(revoked_at=timezone.now())
    person = Contact.objects.create(
        org=org, name="Farah Finance-Operations-Controlling", email="farah@example.com", channels=["email"]
    )
    question = "Who signs off the quarterly budgets for the infrastructure-and-platform-engineering teams? " * 3
    retrying = "SMTP 451: temporary local problem, try again later " * 3
    request = HumanRequest.objects.create(
        org=org, requester=user, contact=person, channel="email", question=question, last_error=retrying
    )

    with browser_page() as page:
        page.set_viewport_size({"width": WIDTH, "height": 800})
        page.goto(f"{brain_url}/login/")
        fits(page)
        page.goto(f"{brain_url}/no/such/page/")
        fits(page)
        log_in(page, brain_url, "wen", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        fits(page)
        page.get_by_label("Name (which assistant or device it is for)").fill(long_name)
        page.get_by_role("button", name="Create token").click()
        expect(page.get_by_role("heading", name=f"Your new token: {long_name}")).to_be_visible()
        fits(page)
        page.get_by_text("Revoked and expired tokens (1)").click()
        fits(page)
        page.route("**/static/brain/brain.js", lambda route: route.abort())  # the confirmation page
        page.reload()
        page.get_by_role("button", name=f"Revoke {ApiToken.objects.filter(user=user).first()}").click()
        expect(page.get_by_role("heading", name="Revoke this token?")).to_be_visible()
        fits(page)
        pages = ("/requests/", f"/requests/{request.public_id}/", "/no/such/page/", "/memory/search/?q=refund",
                 "/memory/mine/", "/knowledge/add/", "/registers/", "/jobs/")  # fmt: skip
        for path in pages:
            page.goto(f"{brain_url}{path}")
            fits(page)
