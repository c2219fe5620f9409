"""request_human_info through the MCP client, and the pages: the answer form and My requests."""

from __future__ import annotations

import pytest

from brain.core.services import mark_memory_built
from conftest import make_org, make_token, make_user
from contacts.models import Contact, HumanRequest
from contacts.services import answer_url, deliver_request, save_contact_topics
from tests.browser import browser_page, log_in
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def setup(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    org = make_org()
    mark_memory_built(org=org)
    user = make_user(org, username="rita", password="a long enough secret", email="rita@example.com")
    finance = Contact.objects.create(
        org=org,
        name="Farah Finance",
        topics="invoices, budgets, expenses",
        email="farah@example.com",
        channels=["email"],
    )
    save_contact_topics(finance)
    return org, user, make_token(org, user=user).plaintext, finance


def test_preview_sends_nothing_then_dispatch_queues_the_previewed_contact(brain_url, setup):
    org, _, token, finance = setup
    preview = call(brain_url, token, "request_human_info", {"question": "What is the expense limit?"})
    contact = preview.structured_content["contact"]
    assert preview.structured_content["status"] == "preview"
    assert contact["name"] == "Farah Finance"
    assert not HumanRequest.objects.filter(org=org).exists()
    missing = call(brain_url, token, "request_human_info", {"question": "q", "dispatch": True})
    assert missing.is_error
    assert "Preview first" in missing.content[0].text
    sent = call(
        brain_url,
        token,
        "request_human_info",
        {"question": "What is the expense limit?", "dispatch": True, "requested_contact_id": contact["contact_id"]},
    )
    assert sent.structured_content["status"] == "queued"
    assert "background" in sent.structured_content["message"]
    assert HumanRequest.objects.get(org=org).contact == finance


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"question": "q", "requested_contact_name": "Nobody Here"}, "not a configured contact"),
        ({"question": "q", "allowed_channel_types": ["call"]}, "No configured contact can be reached over call"),
        ({"question": "q", "requester_directed": True}, "requester_directed needs dispatch true"),
        ({"question": "q" * 4001}, "'question' has 4001 characters"),
        ({"question": "q", "allowed_channel_types": ["pigeon"]}, "'allowed_channel_types.0'"),
    ],
)
def test_refusals_say_what_to_do(brain_url, setup, args, needle):
    _, _, token, _ = setup
    result = call(brain_url, token, "request_human_info", args)
    assert result.is_error
    assert needle in result.content[0].text


def test_read_only_tokens_do_not_see_the_tool(brain_url, setup):
    org, user, _, _ = setup
    tools = run_mcp(brain_url, make_token(org, user=user, scopes="read").plaintext, lambda s: s.list_tools()).tools
    assert "request_human_info" not in {t.name for t in tools}


def test_a_user_sees_their_request_go_from_sent_to_answered(brain_url, setup):
    org, user, token, finance = setup
    preview = call(brain_url, token, "request_human_info", {"question": "Who signs off budgets over 10k?"})
    contact_id = preview.structured_content["contact"]["contact_id"]
    args = {"question": "Who signs off budgets over 10k?", "dispatch": True, "requested_contact_id": contact_id}
    call(brain_url, token, "request_human_info", args)
    request = HumanRequest.objects.get(org=org)
    deliver_request(request_id=request.pk)
    link = answer_url(request).replace("http://127.0.0.1:8000", brain_url)
    other = make_user(org, username="olga", password="a long enough secret")
    with browser_page() as page:
        log_in(page, brain_url, "rita", "a long enough secret")
        page.goto(f"{brain_url}/requests/")
        page.get_by_role("link", name="Who signs off budgets over 10k?").click()
        assert page.locator("#status").inner_text() == "Sent"
        assert page.locator("#answer").inner_text() == "No answer yet."
        browser = page.context.browser
        assert browser is not None
        contact_page = browser.new_page()
        contact_page.goto(link)
        contact_page.get_by_label("Your answer").fill("The CFO signs off anything over 10k.")
        contact_page.get_by_role("button", name="Send answer").click()
        assert contact_page.get_by_role("heading", name="Thank you").is_visible()
        page.reload()
        assert page.locator("#status").inner_text() == "Answered"
        assert "The CFO signs off" in page.locator("#answer").inner_text()
        page.get_by_role("button", name="Save the answer into memory").click()
        assert page.get_by_text("Saved into memory.").is_visible()
        forged = contact_page.goto(link[:-3] + "xx/")
        assert forged is not None
        assert forged.status == 400
        assert "not valid" in contact_page.content()
    with browser_page() as page:
        log_in(page, brain_url, "olga", "a long enough secret")
        theirs = page.goto(f"{brain_url}/requests/{request.public_id}/")
        assert theirs is not None
        assert theirs.status == 404
        page.goto(f"{brain_url}/requests/")
        assert "Who signs off" not in page.content()
    assert other.pk
