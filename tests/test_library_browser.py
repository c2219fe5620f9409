"""The library and a member's changes in a real browser, on a phone (390 x 844) and a desktop:
the documents page filtered, sorted and paged; the entities directory searched; a document
deleted and one made personal after their confirmation pages; a commitment marked done with its
note, by the member it concerns and by an admin. One browser serves the whole module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect, sync_playwright

from brain.core.actors import Actor
from brain.models import AuditRecord, Category, Membership, Organisation
from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_document
from memory.documents.saving import add_document
from memory.models import Document
from registers.commitments.services import record_commitment
from registers.models import Commitment
from registers.tests.helpers import switch_on
from tests.browser import ARGS, CHROMIUM, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium for the module. Playwright's loop runs on this thread until the module ends,
    so the ORM is told it may run beside it for as long (the test database's flush included)."""
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


def person(org: Organisation, username: str, role: str = Membership.MEMBER, **extra: str) -> Actor:
    return make_actor(org, make_user(org, role=role, username=username, password=PASSWORD, **extra), via="web")


def saved(actor: Actor, title: str, content: str, **kw: Any) -> Document:
    document = add_document(actor=actor, title=title, content=content, **kw).document
    assert ingest_document(document_id=document.pk) == "ready"
    return document


def notes(org: Organisation, owner: Actor, count: int) -> None:
    """``count`` ready documents written straight into the table: the list needs rows, not passages."""
    general = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    Document.objects.bulk_create(
        Document(
            org=org,
            title=f"Note {n:02}",
            content="x",
            content_hash=f"note-{n}",
            category=general,
            owner=owner.user,
            source_kind="upload" if n % 2 else "api",
            status="ready",
        )
        for n in range(count)
    )


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_member_filters_sorts_and_pages_the_documents(browser, brain_url, viewport):
    org = make_org()
    mira = person(org, "mira")
    notes(org, mira, 53)
    page = open_page(browser, brain_url, "mira", viewport)
    menu_link(page, "Documents").click()
    expect(page.get_by_role("heading", name="Documents")).to_be_visible()
    expect(page.get_by_text("53 documents, page 1 of 2.")).to_be_visible()
    expect(page.get_by_role("link", name="Next page")).to_be_visible()
    assert fits(page, viewport)
    page.get_by_role("link", name="Title", exact=True).click()
    expect(page).to_have_url(f"{brain_url}/memory/documents/?sort=title")
    expect(page.locator("table.library tbody tr").first).to_contain_text("Note 00")
    page.get_by_role("link", name="Next page").click()
    expect(page.locator("table.library tbody tr")).to_have_count(3)
    expect(page.locator("table.library tbody tr").last).to_contain_text("Note 52")
    page.get_by_label("Kind of source").select_option("upload")
    page.get_by_label("Title contains").fill("Note 1")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("5 documents.")).to_be_visible()
    assert "kind=upload" in page.url
    assert "sort=title" in page.url
    expect(page.locator("table.library tbody tr").first).to_contain_text("Note 11")
    assert fits(page, viewport)
    page.context.close()


def test_a_member_searches_the_entities_directory(browser, brain_url):
    org = make_org()
    mira = person(org, "mira")
    saved(mira, "Team", "Priya Shah works with Dana Lee on the Globex renewal.")
    page = open_page(browser, brain_url, "mira", PHONE)
    menu_link(page, "Entities").click()
    expect(page.get_by_role("link", name="Priya Shah")).to_be_visible()
    page.get_by_label("Name contains").fill("dana")
    page.get_by_role("button", name="Find").click()
    expect(page.get_by_role("link", name="Dana Lee")).to_be_visible()
    expect(page.get_by_role("link", name="Priya Shah")).to_have_count(0)
    assert fits(page, PHONE)
    page.get_by_role("link", name="Dana Lee").click()
    expect(page.get_by_role("heading", name="Dana Lee")).to_be_visible()
    page.context.close()


@pytest.mark.parametrize(("viewport", "deleter"), [(PHONE, "mira"), (DESKTOP, "ada")], ids=["member", "admin"])
def test_a_document_is_deleted_after_a_confirmation_that_says_who_reads_it(browser, brain_url, viewport, deleter):
    org = make_org()
    mira = person(org, "mira")
    person(org, "ada", role=Membership.ADMIN)
    plan = saved(mira, "Lisbon plan", "The Lisbon office opens in June.")
    page = open_page(browser, brain_url, deleter, viewport)
    page.goto(f"{brain_url}/memory/documents/{plan.pk}/")
    page.get_by_role("link", name="Delete…").click()
    expect(page.get_by_role("heading", name="Delete “Lisbon plan”?")).to_be_visible()
    expect(page.get_by_text(f"everyone in {org.name} (2 members)")).to_be_visible()
    assert fits(page, viewport)
    page.get_by_role("button", name="Delete it").click()
    expect(page.get_by_text("Deleted: Lisbon plan")).to_be_visible()
    expect(page.get_by_role("heading", name="Documents")).to_be_visible()
    assert Document.objects.get(pk=plan.pk).trashed_at is not None  # in the trash, restorable
    assert AuditRecord.objects.filter(org=org, action="document.deleted", user__username=deleter).exists()
    page.context.close()


def test_a_member_makes_their_document_personal_and_another_is_offered_nothing(browser, brain_url):
    org = make_org()
    mira, omar = person(org, "mira"), person(org, "omar")
    plan = saved(mira, "Lisbon plan", "The Lisbon office opens in June.")
    theirs = saved(omar, "Berlin plan", "The Berlin office opens in July.")
    page = open_page(browser, brain_url, "mira", DESKTOP)
    page.goto(f"{brain_url}/memory/documents/{theirs.pk}/")
    expect(page.get_by_role("heading", name="Berlin plan")).to_be_visible()
    expect(page.get_by_role("link", name="Delete…")).to_have_count(0)
    expect(page.get_by_role("link", name="Make personal…")).to_have_count(0)
    page.goto(f"{brain_url}/memory/documents/{plan.pk}/")
    page.get_by_role("link", name="Make personal…").click()
    expect(page.get_by_text(f"everyone in {org.name} (2 members)")).to_be_visible()
    page.get_by_role("button", name="Make it personal").click()
    expect(page.get_by_text("personal: only you see it")).to_be_visible()
    plan.refresh_from_db()
    assert (plan.scope, plan.owner_id) == ("personal", mira.user.pk)
    page.context.close()


@pytest.mark.parametrize(("viewport", "who"), [(PHONE, "mira"), (DESKTOP, "ada")], ids=["member", "admin"])
def test_a_commitment_is_marked_done_with_a_note(browser, brain_url, viewport, who):
    org = make_org()
    switch_on(org)
    person(org, "mira", first_name="Mira")
    person(org, "ada", role=Membership.ADMIN)
    recorder = person(org, "rob")
    promise = record_commitment(actor=recorder, owner="Mira", what="Mira will send the revised quote to BigCo")
    page = open_page(browser, brain_url, who, viewport)
    menu_link(page, "Registers").click()
    expect(page.get_by_text("Mira will send the revised quote to BigCo")).to_be_visible()
    assert fits(page, viewport)
    page.get_by_label("Mark it").select_option("done")
    page.get_by_label("Note (what it rests on)").fill("BigCo confirmed receipt by mail")
    page.get_by_role("button", name="Save: Mira will send the revised quote to BigCo").click()
    expect(page.get_by_text("Marked done: Mira will send the revised quote to BigCo")).to_be_visible()
    expect(page.get_by_text("No open commitments.")).to_be_visible()
    promise.refresh_from_db()
    assert (promise.state, promise.note) == ("landed", "BigCo confirmed receipt by mail")
    assert Commitment.objects.filter(pk=promise.pk, settled_by__username=who).exists()
    assert AuditRecord.objects.filter(org=org, action="commitment.updated", user__username=who).exists()
    page.context.close()


def test_a_member_the_commitment_does_not_concern_is_offered_no_form(browser, brain_url):
    org = make_org()
    switch_on(org)
    person(org, "sven")
    record_commitment(actor=person(org, "rob"), owner="Priya", what="Priya will call Initech")
    page = open_page(browser, brain_url, "sven", PHONE)
    page.goto(f"{brain_url}/registers/")
    expect(page.get_by_text("Priya will call Initech")).to_be_visible()
    expect(page.get_by_role("button", name="Save: Priya will call Initech")).to_have_count(0)
    assert Commitment.objects.get(org=org).state == "open"
    page.context.close()
