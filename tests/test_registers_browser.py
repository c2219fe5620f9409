"""The registers in a real browser: an admin answers a contradiction side by side, a member reads
the registers page at phone width, follows a verdict's evidence to its passage (never an id on the
page), sees the glossary's candidates and proposes a term, which an admin accepts.

BRAIN_SCREENSHOTS names a folder to keep screenshots in (docs/screenshots for the docs)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from brain.models import Membership
from conftest import make_actor, make_org, make_user
from memory.tests.factories import save
from registers.commitments.services import record_commitment
from registers.contradictions.nightly import scan_contradictions
from registers.models import Contradiction, Term
from registers.nightly import run_nightly
from registers.tests.helpers import stated, switch_on
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")
WIDTHS = (1280, 375)


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


def a_sales_week(org):
    """A promise made in a meeting, an unrelated message and the reply that says it landed; a
    price stated twice differently; a house acronym waiting for a definition."""
    author = make_actor(org)
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(author, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    for day, text in (
        (3, "I sent the invoice to Acme. The BigCo call is Tuesday."),
        (5, "Yes, the revised quote for BigCo went out this morning."),
    ):
        save(
            author,
            f"sales {day:02d} Mar",
            f"Priya: {text}",
            speaker="Priya",
            conversation="sales",
            occurred_at=datetime(2026, 3, day, 9, tzinfo=UTC),
            source_kind="slack",
        )
    save(author, "Support meeting notes", "- Aiko Tanaka will write the outage macro.\n", source_kind="upload")
    stated(author, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    stated(author, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    chat = save(author, "Payments chat", "Ana: the MID request is with the acquirer, BigCo shops wait on it.")
    Term.objects.create(
        org=org,
        term="MID",
        key="mid",
        uses=5,
        examples=[{"sentence": "the MID request is with the acquirer", "passage": chat.chunks.get().pk}],
    )
    run_nightly(org)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_member_follows_a_verdicts_evidence_to_its_passage_and_reads_no_ids(brain_url, width):
    org = make_org()
    switch_on(org)
    make_user(org, username="mira", password=PASSWORD)
    a_sales_week(org)
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 900})
        log_in(page, brain_url, "mira", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Registers").click()
        row = page.get_by_role("row").filter(has_text="revised quote to BigCo")
        expect(row.get_by_text("“Yes, the revised quote for BigCo went out this morning.”")).to_be_visible()
        expect(row.get_by_text("invoice to Acme")).to_have_count(0)  # said after, but not about the quote
        expect(page.get_by_role("row").filter(has_text="outage macro").get_by_text("not given")).to_be_visible()
        expect(page.get_by_text("none given")).to_have_count(0)
        body = page.locator("main").inner_text()
        assert not re.search(r"\b(chunk|doc|mem)_\d+", body), body
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        row.get_by_role("link", name="sales 05 Mar").click()
        page.wait_for_url(re.compile(r"/memory/documents/\d+/.*#passage-\d+$"))
        anchor = page.url.rsplit("#", 1)[1]
        expect(page.locator(f"#{anchor}")).to_contain_text("went out this morning")


def test_a_members_proposed_term_is_accepted_by_an_admin(brain_url):
    org = make_org()
    switch_on(org)
    make_user(org, username="mira", password=PASSWORD)
    admin = make_user(org, role=Membership.ADMIN, username="ada", password=PASSWORD)
    admin.is_staff = True
    admin.save(update_fields=["is_staff"])
    a_sales_week(org)
    mid = Term.objects.get(org=org, key="mid")
    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 900})
        log_in(page, brain_url, "mira", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/registers/")
        expect(page.get_by_role("heading", name=re.compile(r"^Waiting for a definition \(\d+\)$"))).to_be_visible()
        expect(page.get_by_text("No defined terms yet.")).to_have_count(0)
        candidate = page.locator(f"#term-{mid.pk}")
        expect(candidate.get_by_role("link", name="Payments chat")).to_be_visible()
        candidate.get_by_text("Propose what it means").click()
        candidate.get_by_label("Definition of MID").fill("The merchant identifier an acquirer gives each shop.")
        candidate.get_by_role("button", name="Propose: MID").click()
        expect(page.get_by_text("Proposed: MID. An admin will accept or reject it.")).to_be_visible()
        expect(
            page.get_by_text("Proposed by mira: The merchant identifier an acquirer gives each shop.")
        ).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        page.context.clear_cookies()

        page.set_viewport_size({"width": 1280, "height": 900})
        log_in(page, brain_url, "ada", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/registers/")
        candidate = page.locator(f"#term-{mid.pk}")
        expect(candidate.get_by_label("Definition of MID")).to_have_value(
            "The merchant identifier an acquirer gives each shop."
        )
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/registers.png", full_page=True)
        candidate.get_by_role("button", name="Accept: MID").click()
        expect(page.get_by_text("Defined: MID: The merchant identifier an acquirer gives each shop.")).to_be_visible()
        expect(page.get_by_role("term").filter(has_text="MID")).to_be_visible()
    term = Term.objects.get(org=org, key="mid")
    assert (term.state, term.defined_by) == ("defined", admin)
