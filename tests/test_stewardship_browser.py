"""Knowledge with an owner in a real browser, at 1280 and 375 px: the member who added a page names
its steward and a review interval on the document page; time passes (its last verification moves
into the past) and the page goes stale; the steward finds it in their Needs-you list on the To
review page and on the search page, clicks "Still correct", and the stale mark is gone everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, ViewportSize, expect, sync_playwright

from brain.core.reviews import review_due_on, today
from brain.models import Membership
from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.models import Document
from skills.models import Skill
from skills.services import approve_version, publish_skill
from tests.browser import ARGS, CHROMIUM, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
PHONE: ViewportSize = {"width": 375, "height": 812}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
TEXT = "# Onboarding\n\nThe onboarding buddy of every new hire is named by their team lead on the first day."


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as pw:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Browser, base_url: str, username: str, viewport: ViewportSize) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.set_default_timeout(15000)
    log_in(page, base_url, username, PASSWORD)
    page.wait_for_url(f"{base_url}/connect/")
    return page


def fits(page: Page, viewport: ViewportSize) -> bool:
    return page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def time_passes(document: Document, days: int) -> str:
    """Its last verification ``days`` ago, as the clock moving on would leave it; the day it fell due."""
    document.refresh_from_db()
    document.verified_at = timezone.now() - timedelta(days=days)
    document.review_due_on = review_due_on(
        every_days=document.review_every_days,
        verified_at=document.verified_at,
        recorded_at=document.recorded_at,
        org=document.org,
    )
    document.save(update_fields=["verified_at", "review_due_on"])
    return f"{document.review_due_on:%Y-%m-%d}"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "375"])
def test_the_steward_sees_a_stale_page_in_needs_you_and_says_it_is_still_correct(browser, brain_url, viewport):
    org = make_org()
    mira = make_actor(org, make_user(org, username="mira", password=PASSWORD), via="web")
    make_user(org, role=Membership.MEMBER, username="priya", password=PASSWORD, first_name="Priya", last_name="Shah")
    document = add_document(actor=mira, title="Onboarding", content=TEXT, content_type="text/markdown").document
    assert ingest_document(document_id=document.pk) == "ready"

    adder = open_page(browser, brain_url, "mira", viewport)
    adder.goto(f"{brain_url}/memory/documents/{document.pk}/")
    expect(adder.get_by_text("Nobody looks after it yet")).to_be_visible()
    adder.get_by_label("Steward").select_option(label="Priya Shah")
    adder.get_by_label("Review every (days; empty for never)").fill("30")
    adder.get_by_role("button", name="Save", exact=True).click()
    expect(adder.get_by_text("Saved who looks after it.")).to_be_visible()
    expect(adder.get_by_text("Looked after by Priya Shah")).to_be_visible()
    expect(adder.get_by_role("button", name="Still correct")).to_have_count(0)  # only the steward verifies
    assert fits(adder, viewport)
    adder.context.close()

    due = time_passes(document, days=45)
    stale = f"Stale: review was due on {due}"

    steward = open_page(browser, brain_url, "priya", viewport)
    steward.goto(f"{brain_url}/memory/documents/")
    steward.get_by_role("link", name="To review").click()
    needs_you = steward.get_by_role("region", name="Needs you")
    expect(needs_you.get_by_role("link", name="1 document past its review date")).to_be_visible()
    expect(steward.get_by_text(stale)).to_be_visible()
    steward.goto(f"{brain_url}/memory/search/?q=onboarding+buddy")
    expect(steward.locator(".answer-card").get_by_text(stale)).to_be_visible()
    expect(steward.locator("article.result").first.get_by_text(stale)).to_be_visible()
    steward.goto(f"{brain_url}/memory/documents/{document.pk}/")
    expect(steward.get_by_role("heading", name="Onboarding", exact=True).first).to_be_visible()
    expect(steward.get_by_text(stale)).to_be_visible()
    assert fits(steward, viewport)
    if viewport is DESKTOP:
        SHOTS.mkdir(parents=True, exist_ok=True)
        steward.screenshot(path=str(SHOTS / "stale.png"), full_page=False)

    steward.get_by_role("button", name="Still correct").click()

    expect(steward.get_by_text("Marked as still correct; next review due on")).to_be_visible()
    expect(steward.get_by_text(stale)).to_have_count(0)
    steward.goto(f"{brain_url}/memory/search/?q=onboarding+buddy")
    expect(steward.locator(".answer-card")).to_be_visible()
    expect(steward.get_by_text("Stale: review was due on")).to_have_count(0)
    steward.goto(f"{brain_url}/memory/review/")
    expect(steward.get_by_text("Nothing is waiting for you.")).to_be_visible()
    assert fits(steward, viewport)
    steward.context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "375"])
def test_an_admin_names_a_skills_steward_who_verifies_it_and_sees_the_overview(browser, brain_url, viewport):
    org = make_org()
    ada = make_actor(org, make_user(org, role=Membership.ADMIN, username="ada", password=PASSWORD), via="web")
    priya = make_user(org, username="priya", password=PASSWORD, first_name="Priya", last_name="Shah")
    version = publish_skill(actor=ada, slug="deploy-guide", name="Deploy guide", content="Deploy on **Tuesdays**.")
    approve_version(actor=ada, version_id=version.pk)
    page_text = add_document(actor=ada, title="Leave policy", content="Everyone has 28 days of leave.").document
    assert ingest_document(document_id=page_text.pk) == "ready"

    admin = open_page(browser, brain_url, "ada", viewport)
    admin.goto(f"{brain_url}/skills/deploy-guide/")
    expect(admin.get_by_role("heading", name="Deploy guide")).to_be_visible()
    admin.get_by_label("Steward").select_option(label="Priya Shah")
    admin.get_by_label("Review every (days; empty for never)").fill("90")
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.get_by_text("Looked after by Priya Shah")).to_be_visible()
    assert fits(admin, viewport)
    Skill.objects.filter(slug="deploy-guide").update(review_due_on=today(org) - timedelta(days=2))
    due = f"{today(org) - timedelta(days=2):%Y-%m-%d}"
    admin.goto(f"{brain_url}/overview/")
    owners = admin.get_by_role("region", name="Owners and reviews")
    expect(owners.get_by_text("Skills in use: 1; without a steward: 0; stale: 1.")).to_be_visible()
    expect(owners.locator("td[data-label='Without a steward']")).to_have_text("1")  # the leave policy
    assert fits(admin, viewport)
    admin.context.close()

    steward = open_page(browser, brain_url, "priya", viewport)
    steward.goto(f"{brain_url}/memory/review/")
    steward.get_by_role("region", name="Needs you").get_by_role("link", name="1 skill past its review date").click()
    expect(steward.get_by_text(f"Stale: review was due on {due}")).to_be_visible()
    steward.get_by_role("button", name="Still correct").click()
    expect(steward.get_by_text("Marked as still correct; next review due on")).to_be_visible()
    expect(steward.get_by_text("Stale: review was due on")).to_have_count(0)
    assert priya.pk == Skill.objects.get(slug="deploy-guide").steward_id
    assert fits(steward, viewport)
    steward.context.close()
