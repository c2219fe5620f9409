"""My requests and a request's page: status badges, who was asked, an empty state that says how
requests arise, and tab titles that name the question."""

from __future__ import annotations

import pytest
from django.test import Client

from conftest import make_user
from contacts.models import Contact, HumanRequest

pytestmark = pytest.mark.django_db


def logged_in_member(org):
    user = make_user(org)
    client = Client()
    client.force_login(user)
    return user, client


def ask(org, user, question, **kw):
    person = Contact.objects.create(org=org, name="Farah Finance", email="farah@example.com", channels=["email"])
    return HumanRequest.objects.create(
        org=org, requester=user, contact=person, channel="whatsapp", question=question, **kw
    )


def test_an_empty_list_says_how_requests_arise(org):
    _, client = logged_in_member(org)
    html = client.get("/requests/").content.decode()
    assert "No requests yet." in html
    assert "<code>request_human_info</code>" in html
    assert 'href="/connect/"' in html


def test_each_request_shows_its_contact_and_a_status_badge(org):
    user, client = logged_in_member(org)
    ask(org, user, "Who signs off budgets?", status=HumanRequest.Status.ANSWERED)
    html = client.get("/requests/").content.decode()
    assert '<th scope="col">Contact</th>' in html
    assert '<td data-label="Contact">Farah Finance<br><span class="muted">by WhatsApp</span></td>' in html
    assert '<span class="badge badge-answered">Answered</span>' in html
    assert "No requests yet." not in html


def test_a_request_page_is_titled_by_its_question(org):
    user, client = logged_in_member(org)
    request = ask(org, user, "Who signs off budgets over 10k <and why>?")
    html = client.get(f"/requests/{request.public_id}/").content.decode()
    title = html.split("<title>")[1].split("</title>")[0]
    assert title == "Who signs off budgets over 10k &lt;and why&gt;? · My requests · Brain"
    assert request.public_id not in title


def test_a_long_question_is_cut_in_the_title(org):
    user, client = logged_in_member(org)
    request = ask(org, user, "Why " + "very " * 40 + "long?")
    title = client.get(f"/requests/{request.public_id}/").content.decode().split("<title>")[1].split("</title>")[0]
    assert title.startswith("Why very very")
    assert "… · My requests · Brain" in title
