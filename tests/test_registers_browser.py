"""The registers in a real browser: an admin answers a contradiction side by side, and a member
reads the registers page at phone width."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from brain.models import Membership
from conftest import make_actor, make_org, make_user
from registers.commitments.services import record_commitment
from registers.contradictions.nightly import scan_contradictions
from registers.models import Contradiction
from registers.tests.helpers import stated, switch_on
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch, settings):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.BRAIN_EXTRACT_FACTS = False


def test_an_admin_answers_a_price_contradiction_with_a_note_and_memory_follows(brain_url):
    org = make_org()
    switch_on(org, "contradictions")
    admin = make_user(org, role=Membership.ADMIN, username="ada", password=PASSWORD)
    admin.is_staff = True
    admin.save(update_fields=["is_staff"])
    author = make_actor(org)
    a = stated(author, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    b = stated(author, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    scan_contradictions(org)
    entry = Contradiction.objects.get(org=org)

    with browser_page() as page:
        log_in(page, brain_url, "ada", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/admin/registers/contradiction/")
        page.locator("#result_list tbody tr").first.get_by_role("link").first.click()
        expect(page.get_by_role("cell", name=a.statement)).to_be_visible()
        expect(page.get_by_role("cell", name=b.statement)).to_be_visible()
        expect(page.get_by_role("link", name="source document")).to_have_count(2)
        page.get_by_label("a stands, b is superseded").check()
        page.get_by_role("button", name="Answer").click()  # no note: the browser keeps the form
        expect(page.get_by_label("Note")).to_have_attribute("required", "")
        assert Contradiction.objects.get(pk=entry.pk).state == "open"
        page.get_by_label("Note").fill("Billing system shows 48500.")
        page.get_by_role("button", name="Answer").click()
        expect(page.get_by_text(f"{entry.public_id} answered.")).to_be_visible()

    entry.refresh_from_db()
    assert (entry.state, entry.answer, entry.answered_by) == ("resolved", "a", admin)
    loser = entry.fact_b if entry.fact_a == a else entry.fact_a
    assert loser is not None
    loser.refresh_from_db()
    assert loser.superseded_at is not None


def test_a_member_reads_the_registers_page_on_a_phone(brain_url):
    org = make_org()
    switch_on(org)
    member = make_user(org, username="mira", password=PASSWORD)
    record_commitment(actor=make_actor(org, member), owner="Priya", what="Priya will send the revised quote to BigCo")
    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "mira", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Registers").click()
        expect(page.get_by_role("heading", name="Open commitments")).to_be_visible()
        expect(page.get_by_text("Priya will send the revised quote to BigCo")).to_be_visible()
        expect(page.get_by_text("No open contradictions.")).to_be_visible()
        expect(page.get_by_text("No defined terms yet.")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
