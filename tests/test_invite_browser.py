"""Inviting a member, end to end in a real browser: an organisation admin invites by email, the
invited person opens the link from the email, sets a password and logs in; the link then no
longer works."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core import mail
from playwright.sync_api import expect

from brain.models import Membership
from brain.tests.admin_client import make_org_admin
from conftest import make_org
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
NEW_PASSWORD = "tulips in the quiet harbour"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_an_invited_member_sets_a_password_from_the_email_and_logs_in(brain_url):
    org = make_org()
    make_org_admin(org, username="ada", password=PASSWORD)
    mail.outbox.clear()

    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "ada", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/admin/brain/membership/")
        page.get_by_role("link", name="Invite a member").click()
        page.get_by_label("Email address").fill("nina@example.com")
        page.get_by_label("Role").select_option("member")
        page.get_by_role("button", name="Send the invitation").click()
        expect(page.locator(".messagelist")).to_contain_text("Invitation sent to nina@example.com")
        page.get_by_role("button", name="Log out").click()

        assert len(mail.outbox) == 1
        found = re.search(r"http\S+/invitation/\S+/", str(mail.outbox[0].body))
        assert found is not None
        link = found.group().replace(settings.BRAIN_BASE_URL, brain_url)
        page.goto(link)
        expect(page.get_by_role("heading", name="Welcome to Brain")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        page.get_by_label("New password").fill(NEW_PASSWORD)
        page.get_by_label("The same password again").fill(NEW_PASSWORD)
        page.get_by_role("button", name="Set my password").click()
        expect(page.get_by_text("Your password is set.")).to_be_visible()
        expect(page.get_by_label("Username")).to_have_value("nina@example.com")
        page.get_by_label("Password").fill(NEW_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{brain_url}/memory/search/")  # a member lands on search
        expect(page.get_by_role("button", name="Log out nina@example.com")).to_be_visible()

        page.goto(link)
        expect(page.get_by_role("heading", name="This invitation link cannot be used")).to_be_visible()

    assert Membership.objects.get(org=org, user__email="nina@example.com").role == Membership.MEMBER
