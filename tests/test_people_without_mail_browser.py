"""Asking a person on a Brain with no mail server, end to end: the assistant's tool says plainly
that the person was not reached and gives the asker the link; the asker's page shows it in words
with a Copy link button, at 1280 and 375 px; the organisation's admin sees it in the admin; the
person, a member signed in, answers on their requests page; nobody else sees the link."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from brain.core.services import mark_memory_built
from brain.models import AuditRecord
from brain.tests.admin_client import make_org_admin
from conftest import make_org, make_token, make_user
from contacts.models import Contact, HumanRequest
from contacts.services import save_contact_topics
from tests.browser import browser_page, log_in
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")  # a folder to keep screenshots in, when set
QUESTION = "What is the expense limit for client dinners?"
NO_MAIL_WORDS = "No mail server is set up: copy this link and pass it on."


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def no_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = ""


@pytest.fixture
def asked(no_mail, brain_url):
    """Rita asks Farah (a member, linked to her contact) through the MCP tool, with no mail server."""
    org = make_org()
    mark_memory_built(org=org)
    rita = make_user(org, username="rita", password=PASSWORD, email="rita@example.com")
    farah = make_user(org, username="farah", password=PASSWORD, first_name="Farah")
    contact = Contact.objects.create(
        org=org,
        name="Farah Finance",
        topics="expenses, budgets",
        email="farah@example.com",
        channels=["email"],
        user=farah,
    )
    save_contact_topics(contact)
    token = make_token(org, user=rita).plaintext
    preview = call(brain_url, token, "request_human_info", {"question": QUESTION})
    assert "No mail server is set up on this Brain" in preview.structured_content["message"]
    contact_id = preview.structured_content["contact"]["contact_id"]
    sent = call(
        brain_url,
        token,
        "request_human_info",
        {"question": QUESTION, "dispatch": True, "requested_contact_id": contact_id},
    )
    return org, sent


def test_the_tool_says_the_person_was_not_reached_and_gives_the_asker_the_link(asked):
    org, sent = asked
    out = sent.structured_content
    request = HumanRequest.objects.get(org=org)
    assert out["status"] == "not_sent"
    assert request.status == HumanRequest.Status.NOT_SENT
    assert out["answer_link"].startswith(f"{settings.BRAIN_BASE_URL}/answer/")
    assert "Farah Finance was not emailed" in out["message"]
    assert out["answer_link"] in out["message"]
    assert sent.content[0].text.startswith("NOT sent: Farah Finance was not reached.")


def local(link: str, brain_url: str) -> str:
    return link.replace(settings.BRAIN_BASE_URL, brain_url)


def see_the_link(page: Page, brain_url: str, link: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{brain_url}/requests/")
    expect(page.get_by_text("Not sent: no mail server is set up")).to_be_visible()
    page.get_by_role("link", name=QUESTION).click()
    expect(page.locator("#status")).to_have_text("Not sent")
    expect(page.get_by_role("alert")).to_have_text(NO_MAIL_WORDS)
    expect(page.locator("#answer-link")).to_have_text(link)
    page.get_by_role("button", name="Copy link").click()
    expect(page.get_by_text("Copied.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == link
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert "Errno" not in page.content()
    if SHOTS and width > 1000:
        page.screenshot(path=f"{SHOTS}/request-not-sent.png", full_page=True)


def test_the_asker_copies_the_link_and_the_person_answers_signed_in(asked, brain_url):
    org, sent = asked
    link = sent.structured_content["answer_link"]
    request = HumanRequest.objects.get(org=org)
    with browser_page() as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=brain_url)
        log_in(page, brain_url, "rita", PASSWORD, then="/requests/")
        for width in (1280, 375):
            see_the_link(page, brain_url, link, width)

    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "farah", PASSWORD, then="/requests/")
        page.wait_for_url(f"{brain_url}/requests/")
        questions = page.get_by_role("region", name="Questions for you")
        expect(questions.get_by_role("heading", name=QUESTION)).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        questions.get_by_label("Your answer").fill("80 euros a head, wine included.")
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/questions-for-you.png", full_page=True)
        questions.get_by_role("button", name="Send answer").click()
        expect(page.get_by_text("Your answer was sent to rita: it shows on their requests page.")).to_be_visible()
        expect(page.get_by_role("region", name="Questions for you")).to_have_count(0)

    request.refresh_from_db()
    assert request.status == HumanRequest.Status.ANSWERED
    assert request.answer == "80 euros a head, wine included."
    record = AuditRecord.objects.get(org=org, action="request.answered")
    assert (record.who, record.via) == ("farah", "web")
    with browser_page() as page:
        log_in(page, brain_url, "rita", PASSWORD, then=f"/requests/{request.public_id}/")
        expect(page.locator("#status")).to_have_text("Answered")
        expect(page.locator("#answer")).to_have_text("80 euros a head, wine included.")
        expect(page.locator("#answer-link")).to_have_count(0)  # nothing left to pass on
    assert local(link, brain_url)


def test_the_organisations_admin_gets_the_link_and_nobody_else_does(asked, brain_url):
    org, sent = asked
    link = sent.structured_content["answer_link"]
    request = HumanRequest.objects.get(org=org)
    make_org_admin(org, username="ada", password=PASSWORD)
    make_user(org, username="olga", password=PASSWORD)
    make_org_admin(make_org(), username="otto", password=PASSWORD)
    change = f"{brain_url}/admin/contacts/humanrequest/{request.pk}/change/"
    with browser_page() as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=brain_url)
        log_in(page, brain_url, "ada", PASSWORD, then="/admin/")
        page.goto(f"{brain_url}/admin/contacts/humanrequest/")
        expect(page.get_by_text("Not sent: no mail server is set up")).to_be_visible()
        page.goto(change)
        expect(page.locator("#delivery-words")).to_have_text(NO_MAIL_WORDS)
        expect(page.locator("#answer-link")).to_have_text(link)
        page.get_by_role("button", name="Copy link").click()
        assert page.evaluate("navigator.clipboard.readText()") == link
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/admin-request-not-sent.png", full_page=True)
    for outsider, landing in (("olga", "/requests/"), ("otto", "/admin/")):
        with browser_page() as page:
            log_in(page, brain_url, outsider, PASSWORD, then=landing)
            page.wait_for_url(f"{brain_url}{landing}")
            mine = page.goto(f"{brain_url}/requests/{request.public_id}/")
            assert mine is not None
            assert mine.status == 404
            page.goto(f"{brain_url}/requests/")
            assert link not in page.content()
            page.goto(change)
            assert link not in page.content()
            csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            answered = page.request.post(
                f"{brain_url}/requests/{request.public_id}/answer/",
                form={"answer": "forged"},
                headers={"X-CSRFToken": csrf},
            )
            assert answered.status == 404  # not theirs: as if it did not exist
    request.refresh_from_db()
    assert request.status == HumanRequest.Status.NOT_SENT


def test_the_link_from_the_tool_answers_without_an_account(asked, brain_url):
    org, sent = asked
    with browser_page() as page:
        page.goto(local(sent.structured_content["answer_link"], brain_url))
        page.get_by_label("Your answer").fill("80 euros.")
        page.get_by_role("button", name="Send answer").click()
        expect(page.get_by_text("rita sees it on their requests page in Brain")).to_be_visible()
    record = AuditRecord.objects.get(org=org, action="request.answered")
    assert (record.who, record.via, record.user) == ("Farah Finance (answer link)", "link", None)
