"""The overview page in a real browser, on real rows: calls over several days, a failed document
and a question that found nothing. An admin reads it on a phone and retries the document."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Dialog, expect

from brain.models import Membership, ToolCall
from conftest import make_actor, make_org, make_user
from memory.models import Document
from overview.tests.overview_data import called, failed, missed
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")  # a folder to keep screenshots in, when set


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def busy_organisation():
    org = make_org()
    make_user(org, role=Membership.ADMIN, username="ada", password=PASSWORD)
    mira = make_user(org, first_name="Mira", last_name="Kovač")
    now = timezone.now()
    for back in range(8):
        day = now - timedelta(days=back)
        called(org, day, "search_company_memory", user=mira, n=back + 2, duration_ms=30.0 + back, credits=1)
        called(org, day, "ask_company_memory", user=mira, n=2, duration_ms=400.0 + 10 * back)
        called(org, day, "<svg onload=alert(1)>", n=1, outcome=ToolCall.ERROR, error_code="internal")
    document = failed(make_actor(org), "Q3 board pack", error="the PDF has no text layer")
    missed(org, "Who signs off travel over 2,000 EUR?", user=mira)
    return org, document


def test_an_admin_reads_the_overview_on_a_phone_and_retries_a_failed_document(brain_url):
    org, document = busy_organisation()
    dialogs: list[str] = []

    def refuse(dialog: Dialog) -> None:  # a script that ran would open one
        dialogs.append(dialog.message)
        dialog.dismiss()

    with browser_page() as page:
        page.on("dialog", refuse)
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "ada", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Overview").click()
        expect(page.get_by_role("heading", name=f"Overview: {org.name}")).to_be_visible()

        charts = page.locator("svg.chart")
        expect(charts).to_have_count(4)
        expect(page.get_by_role("img", name="Calls per day by tool")).to_be_visible()
        expect(page.get_by_role("img", name="Latency per day, median and 95th percentile")).to_be_visible()
        assert page.locator("svg.chart rect.bar").count() >= 8 * 3
        assert page.locator("svg.chart circle.point").count() == 16
        box = charts.first.bounding_box()
        assert box is not None
        assert 250 < box["width"] <= 375
        legend = page.locator("#chart-calls .legend-item text").all_text_contents()
        assert legend == ["search_company_memory", "ask_company_memory", "<svg onload=alert(1)>"]
        expect(page.get_by_role("row", name="Mira Kovač 60 44")).to_be_visible()  # calls, credits
        expect(page.get_by_text("Who signs off travel over 2,000 EUR?")).to_be_visible()
        expect(page.get_by_text("the PDF has no text layer")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/overview-phone.png", full_page=True)

        page.get_by_role("button", name="Retry Q3 board pack").click()
        expect(page.get_by_text("Q3 board pack: queued to be read again.")).to_be_visible()
        expect(page.get_by_text("No failed documents.")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375

    assert dialogs == []
    document.refresh_from_db()
    assert document.status == Document.Status.QUEUED


def test_an_operator_opens_the_overview_from_the_admin_index_on_a_wide_screen(brain_url):
    org, _ = busy_organisation()
    make_org()  # the operator picks among every organisation
    operator = make_user(username="root", password=PASSWORD)
    operator.is_staff = operator.is_superuser = True
    operator.save(update_fields=["is_staff", "is_superuser"])
    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        log_in(page, brain_url, "root", PASSWORD)
        page.goto(f"{brain_url}/admin/")
        page.get_by_role("link", name="Overview").click()
        page.get_by_label("Organisation").select_option(org.slug)
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_role("heading", name=f"Overview: {org.name}")).to_be_visible()
        expect(page.locator("svg.chart")).to_have_count(4)
        box = page.locator("svg.chart").first.bounding_box()
        assert box is not None
        assert box["height"] < 500  # wide pages do not blow the charts up
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/overview-wide.png", full_page=True)
