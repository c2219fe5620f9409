"""The memory pages in a real browser, on real data saved and ingested through the services:
search shows a personal document to its owner only, an entity page marks a replaced fact and
shows its timeline, forget moves a memory to the trash, and every page fits a phone.

With ``BRAIN_SCREENSHOTS=1`` the last test also saves a screenshot of each page, 1000 px wide,
into docs/screenshots/ (docs/web.md shows them)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Dialog, Page, ViewportSize, expect

from brain.core.actors import Actor
from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.graph import memories as fact_services
from memory.models import Document, Entity, Fact
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
PHONE: ViewportSize = {"width": 375, "height": 800}
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def saved(actor: Actor, title: str, content: str, **kw: Any) -> Document:
    document = add_document(actor=actor, title=title, content=content, **kw).document
    assert ingest_document(document_id=document.pk) == "ready"
    return document


def member(org, username: str) -> Actor:
    return make_actor(org, make_user(org, username=username, password=PASSWORD), via="web")


def logged_in(page: Page, base_url: str, username: str) -> None:
    log_in(page, base_url, username, PASSWORD)
    page.wait_for_url(f"{base_url}/connect/")


def fits(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def roles(actor: Actor) -> tuple[Document, Document]:
    old = saved(actor, "Roles 2025", "Sam Carter is head of support at Acme. Support works from the Lisbon office.")
    new = saved(
        actor,
        "Roles 2026",
        "Priya Shah became head of support on 1 March 2026. Priya Shah works with Dana Lee on the Globex renewal.",
    )
    return old, new


def test_search_finds_a_personal_document_only_for_its_owner(brain_url):
    org = make_org()
    owner, other = member(org, "olga"), member(org, "omar")
    saved(owner, "Olga's notes", "My plan: move the quarterly review to the Lisbon office.", scope="personal")
    saved(other, "Office list", "The Berlin office opens in June.")
    with browser_page() as page:
        page.set_viewport_size(PHONE)
        logged_in(page, brain_url, "olga")
        menu_link(page, "Search").click()
        page.get_by_label("Search for").fill("Lisbon office review")
        page.get_by_role("button", name="Search").click()
        result = page.locator("article.result").get_by_role("link", name="Olga's notes")
        expect(result).to_be_visible()
        expect(page.locator(".answer-card")).to_contain_text("Olga's notes")
        expect(page.locator("mark", has_text="Lisbon").first).to_be_visible()
        assert fits(page)
        result.click()
        expect(page.get_by_role("heading", name="Olga's notes")).to_be_visible()
        expect(page.get_by_text("personal: only you see it")).to_be_visible()
        assert fits(page)

    with browser_page() as page:
        logged_in(page, brain_url, "omar")
        page.goto(f"{brain_url}/memory/search/?q=Lisbon+office+review")
        expect(page.get_by_role("heading", name="Search")).to_be_visible()
        expect(page.locator("article.result").get_by_role("link", name="Office list")).to_be_visible()
        expect(page.get_by_role("link", name="Olga's notes")).to_have_count(0)


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_search_answers_first_with_one_row_per_document_and_filters_in_the_url(brain_url, viewport):
    org = make_org()
    actor = member(org, f"sue{viewport['width']}")
    handbook = "\n\n".join(
        f"## Route {n}\n\nThe harbour ferry route {n} leaves the north pier every {n + 10} minutes." for n in range(8)
    )
    saved(actor, "Ferry handbook", handbook, content_type="text/markdown")
    saved(actor, "#ops", "Who has the harbour ferry routes from the north pier?", speaker="Ines", conversation="#ops")
    with browser_page() as page:
        page.set_viewport_size(viewport)
        log_in(page, brain_url, actor.user.username, PASSWORD)
        page.goto(f"{brain_url}/memory/search/")
        page.get_by_label("Search for").fill("harbour ferry north pier")
        page.get_by_role("button", name="Search", exact=True).click()
        card = page.locator(".answer-card")
        expect(card.get_by_role("heading", name="Answer")).to_be_visible()
        expect(page.locator("article.result h3", has_text="Ferry handbook")).to_have_count(1)
        expect(page.get_by_role("link", name="more in this document").first).to_be_visible()
        assert viewport != PHONE or fits(page)
        box = card.bounding_box()
        assert box is not None
        assert box["y"] < viewport["height"]
        expect(page.get_by_label("Said by", exact=True)).to_be_hidden()
        page.locator("details.filters-fold summary").click()
        page.get_by_label("Said by", exact=True).select_option("Ines")
        page.get_by_role("button", name="Filter").click()
        assert "person=Ines" in page.url
        expect(page.locator("article.result h3", has_text="Ferry handbook")).to_have_count(0)
        expect(page.locator("article.result h3", has_text="#ops")).to_have_count(1)
        page.get_by_role("link", name="Clear filters").click()
        expect(page.locator("article.result h3", has_text="Ferry handbook")).to_have_count(1)
        assert viewport != PHONE or fits(page)


def test_the_entity_page_marks_a_replaced_fact_and_shows_its_timeline(brain_url):
    org = make_org()
    actor = member(org, "mira")
    old, new = roles(actor)
    sam = Fact.objects.get(document=old, relation="head_of")
    assert sam.superseded_by is not None
    assert sam.superseded_by.document_id == new.pk
    with browser_page() as page:
        page.set_viewport_size(PHONE)
        logged_in(page, brain_url, "mira")
        page.goto(f"{brain_url}/memory/documents/{new.pk}/")
        page.locator(".entities").get_by_role("link", name="Support").click()
        expect(page.get_by_role("heading", name="Support", exact=True)).to_be_visible()
        replaced = page.locator(".facts .fact-replaced")
        expect(replaced).to_have_count(1)
        expect(replaced).to_contain_text("Sam Carter is head of support at Acme.")
        expect(replaced.locator(".badge-replaced")).to_be_visible()
        expect(replaced).to_contain_text("replaced by: Priya Shah became head of support on 1 March 2026.")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".event", has_text="became true")).to_contain_text("2026-03-01")
        expect(timeline.locator(".event", has_text="memory replaced it")).to_contain_text("Sam Carter")
        expect(timeline.locator(".event", has_text="memory learned it")).to_have_count(2)
        assert fits(page)

        graph = page.locator("svg.graph")
        before = graph.get_attribute("viewBox")
        page.get_by_role("button", name="Zoom in").click()
        expect(graph).not_to_have_attribute("viewBox", before or "")
        page.get_by_role("button", name="Show the whole drawing").click()
        expect(graph).to_have_attribute("viewBox", before or "")

        page.get_by_label("Neighbourhood").select_option("2")
        page.get_by_role("button", name="Show", exact=True).click()
        page.locator("svg.graph a", has_text="Priya Shah").click()
        expect(page.get_by_role("heading", name="Priya Shah", exact=True)).to_be_visible()
        expect(page.locator("svg.graph a", has_text="Dana Lee")).to_have_count(1)
        assert "depth=2" in page.url
        assert fits(page)


def test_a_documents_table_is_shown_as_a_table_that_fits_a_phone(brain_url):
    org = make_org()
    actor = member(org, "tao")
    pricing = saved(
        actor,
        "Pricing",
        "# Pricing\n\nBilled monthly.\n\n| Plan | Price per seat | Seats up to |\n"
        "|---|---|---|\n| Team | 29 EUR | 50 |\n| Starter | 9 EUR | 10 |\n\n- Cancel at any time.\n",
        content_type="text/markdown",
    )
    with browser_page() as page:
        page.set_viewport_size(PHONE)
        logged_in(page, brain_url, "tao")
        page.goto(f"{brain_url}/memory/documents/{pricing.pk}/")
        table = page.locator(".document-blocks table")
        expect(table.get_by_role("columnheader", name="Price per seat")).to_be_visible()
        expect(table.get_by_role("row", name="Team 29 EUR 50")).to_be_visible()
        expect(page.locator(".document-blocks li", has_text="Cancel at any time.")).to_be_visible()
        expect(page.locator(".document-blocks")).not_to_contain_text("|")
        assert fits(page)


def test_forget_moves_a_memory_to_the_trash(brain_url):
    org = make_org()
    actor = member(org, "fern")
    fact = fact_services.remember(actor=actor, content="Fern prefers meetings after 10:00.", scope="personal")
    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    with browser_page() as page:
        page.on("dialog", accept)
        page.set_viewport_size(PHONE)
        logged_in(page, brain_url, "fern")
        menu_link(page, "My memories").click()
        expect(page.get_by_text("Fern prefers meetings after 10:00.")).to_be_visible()
        assert fits(page)
        page.get_by_role("button", name="Forget").click()
        expect(page.get_by_text("Forgotten: Fern prefers meetings after 10:00.")).to_be_visible()
        expect(page.get_by_role("button", name="Forget")).to_have_count(0)
    assert asked == [
        "Forget this memory? It is read by only you. It goes to the trash, where you can restore it for 30 days."
    ]
    assert Fact.objects.get(pk=fact.pk).trashed_at is not None


def test_every_memory_page_fits_a_phone(brain_url):
    org = make_org()
    actor = member(org, "pia")
    roles(actor)
    fact_services.remember(
        actor=actor,
        content="Pia reviews the Globex renewal every Friday.",
        subject="Pia",
        relations=[{"from": "Pia", "to": "Globex", "relation": "reviews"}],
    )
    saved(actor, "Support handbook", "Support answers within one working day.", external_id="handbook")
    handbook = saved(
        actor,
        "Support handbook",
        "Support answers within four hours. Priya Shah leads support, with Sam Carter on the Globex account.",
        external_id="handbook",
    )
    support = Entity.objects.get(org=org, name="Support")
    pages = {
        "search": "/memory/search/?q=who+is+head+of+support",
        "document": f"/memory/documents/{handbook.pk}/",
        "entity": f"/memory/entities/{support.pk}/?depth=2",
        "mine": "/memory/mine/",
    }
    with browser_page() as page:
        page.set_viewport_size(PHONE)
        logged_in(page, brain_url, "pia")
        for name, path in pages.items():
            page.goto(f"{brain_url}{path}")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} is {width} px wide at {PHONE['width']} px"
        if os.environ.get("BRAIN_SCREENSHOTS"):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.set_viewport_size({"width": 1000, "height": 900})
            for name, path in pages.items():
                page.goto(f"{brain_url}{path}")
                page.screenshot(path=str(SCREENSHOTS / f"memory-{name}.png"), full_page=True)


PRICING = """# Plans and pricing

| Plan | Price per seat | Seats up to |
|---|---|---|
| Starter | 12 EUR per seat a month | 10 |
| Team | 29 EUR per seat a month | 50 |
"""


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_the_answer_card_answers_and_shows_a_later_source_that_says_otherwise(brain_url, viewport):
    org = make_org()
    actor = member(org, f"ria{viewport['width']}")
    march, april = datetime(2026, 3, 2, 9, tzinfo=UTC), datetime(2026, 4, 14, 16, tzinfo=UTC)
    saved(actor, "Plans and pricing", PRICING, content_type="text/markdown", occurred_at=march)
    saved(actor, "#sales", "Heads up: the Team plan is 25 EUR per seat now.", speaker="Ana", occurred_at=april)
    saved(actor, "Canteen", "The canteen serves soup on Mondays and curry on Thursdays.")
    with browser_page() as page:
        page.set_viewport_size(viewport)
        log_in(page, brain_url, actor.user.username, PASSWORD)
        page.goto(f"{brain_url}/memory/search/?q=How+much+does+the+Team+plan+cost")
        card = page.locator(".answer-card")
        expect(card.locator(".answer-line")).to_have_text(re.compile(r"^(29|25) EUR per seat"))
        expect(card.get_by_role("heading", name="Another source says otherwise")).to_be_visible()
        expect(card.get_by_text("2026-03-02")).to_be_visible()
        expect(card.get_by_text("2026-04-14")).to_be_visible()
        expect(page.locator("article.result h3", has_text="Canteen")).to_have_count(0)  # results end at the evidence
        box = card.locator(".answer-line").bounding_box()
        assert box is not None
        assert box["y"] < viewport["height"]
        assert viewport != PHONE or fits(page)
        if os.environ.get("BRAIN_SCREENSHOTS") and viewport != PHONE:
            page.set_viewport_size({"width": 1000, "height": 900})
            page.screenshot(path=str(SCREENSHOTS / "answer-card.png"), full_page=True)
        page.goto(f"{brain_url}/memory/search/?q=boiling+point+of+tungsten+in+kelvin")
        expect(page.locator(".answer-card")).to_have_count(0)
        expect(page.get_by_text("Nothing in memory matches this")).to_be_visible()
