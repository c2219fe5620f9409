"""The trash in a real browser, at 1280 and 375 px: a member deletes a document, the notice's Undo
brings it back; deleted again, it waits on the Trash page (linked from Documents) until its
Restore button brings it back, found by search again. Another member's Trash page is empty.

Saves docs/screenshots/trash.png (the Trash page with a deleted document and a forgotten memory,
1280 px) for docs/memory.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from brain.core.actors import Actor
from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.graph import memories as fact_services
from memory.models import Document
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 800}}
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def member(org, username: str) -> Actor:
    return make_actor(org, make_user(org, username=username, password=PASSWORD), via="web")


def saved(actor: Actor, title: str, content: str) -> Document:
    document = add_document(actor=actor, title=title, content=content).document
    assert ingest_document(document_id=document.pk) == "ready"
    return document


def fits(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def delete_from_its_page(page: Page, base_url: str, document: Document) -> None:
    page.goto(f"{base_url}/memory/documents/{document.pk}/")
    page.get_by_role("link", name="Delete").first.click()
    page.get_by_role("button", name="Delete it").click()


@pytest.mark.parametrize("size", SIZES)
def test_delete_undo_and_restore_from_the_trash(brain_url, size):
    org = make_org()
    owner, other = member(org, f"tess-{size}"), member(org, f"otto-{size}")
    plan = saved(owner, "Kiosk rollout plan", "The Duskwater kiosks go live in August. Pellucid installs them.")
    fact_services.remember(actor=owner, content="Tess owns the Duskwater kiosk budget.", scope="personal")
    width = SIZES[size]["width"]
    with browser_page() as page:
        page.set_viewport_size(SIZES[size])
        log_in(page, brain_url, owner.user.get_username(), PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")

        delete_from_its_page(page, brain_url, plan)
        notice = page.locator(".notice-undo")
        expect(notice).to_contain_text("Deleted: Kiosk rollout plan. It is in the trash until")
        fits(page, width)
        notice.get_by_role("button", name="Undo").click()
        expect(page.locator(".notice-undo")).to_contain_text("Restored: Kiosk rollout plan")
        expect(page.get_by_role("heading", name="Kiosk rollout plan")).to_be_visible()
        assert Document.objects.get(pk=plan.pk).trashed_at is None

        delete_from_its_page(page, brain_url, plan)
        menu_link(page, "My memories").click()
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Forget").click()
        expect(page.locator(".notice-undo")).to_contain_text("It is in the trash until")
        menu_link(page, "Documents").click()
        expect(page.get_by_role("link", name="Kiosk rollout plan")).to_have_count(0)
        page.get_by_role("link", name="Trash").click()
        rows = page.locator("table.trash tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.filter(has_text="Kiosk rollout plan")).to_contain_text("by you")
        expect(rows.filter(has_text="Tess owns the Duskwater kiosk budget.")).to_contain_text("memory")
        fits(page, width)
        if size == "desktop":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "trash.png"), full_page=True)

        rows.filter(has_text="Kiosk rollout plan").get_by_role("button", name="Restore").click()
        expect(page.locator(".notice-undo")).to_contain_text("Restored: Kiosk rollout plan")
        menu_link(page, "Search").click()
        page.get_by_label("Search for").fill("Duskwater kiosks")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("article.result").get_by_role("link", name="Kiosk rollout plan")).to_be_visible()

    with browser_page() as page:
        page.set_viewport_size(SIZES[size])
        log_in(page, brain_url, other.user.get_username(), PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/memory/trash/")
        expect(page.get_by_text("The trash is empty.")).to_be_visible()
        fits(page, width)
