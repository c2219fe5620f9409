"""Asking a person with no mail server, or one that fails: the request is kept, the asker and the
organisation's admins get its answer link to pass on with the problem in words (never the raw
error), nobody else sees the link, and the person linked to the contact answers signed in through
the same service as the link, audited alike."""

from __future__ import annotations

import socket

import pytest
from django.test import Client

from brain.infra.mail import mail_is_set_up, unmailed
from brain.models import AuditRecord, Features, Membership
from brain.tests.admin_client import make_org_admin
from conftest import make_actor, make_org, make_user
from contacts.models import Contact, HumanRequest
from contacts.selectors import get_question_for, get_undelivered, list_questions_for
from contacts.services import (
    MAX_RETRIES,
    RetryLater,
    answer_url,
    deliver_request,
    dispatch_request,
    record_answer,
    request_from_token,
)
from contacts.tests.test_transports import Reply, as_json, stub, twilio, twilio_api
from contacts.undelivered import undelivered

__all__ = ["stub", "twilio"]  # the stand-in Twilio's fixtures

SMTP = "django.core.mail.backends.smtp.EmailBackend"
NO_MAIL_WORDS = "No mail server is set up: copy this link and pass it on."
UNREACHABLE_WORDS = (
    "Brain could not reach the mail server (it will keep trying): meanwhile copy this link and pass it on."
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def no_mail(settings):
    settings.EMAIL_BACKEND, settings.EMAIL_HOST = SMTP, ""


@pytest.fixture
def mail_refused(settings):
    """A mail server that is set up but not there: connecting is refused."""
    settings.EMAIL_BACKEND, settings.EMAIL_HOST, settings.EMAIL_PORT = SMTP, "127.0.0.1", free_port()


def farah(org, **kw):
    return Contact.objects.create(org=org, name="Farah Finance", email="farah@example.com", channels=["email"], **kw)


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


# --- whether mail is set up ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "host", "set_up"),
    [
        (SMTP, "", False),
        (SMTP, "  ", False),
        (SMTP, "mail.example.com", True),
        ("django.core.mail.backends.dummy.EmailBackend", "mail.example.com", False),
        ("django.core.mail.backends.console.EmailBackend", "", True),
        ("django.core.mail.backends.locmem.EmailBackend", "", True),
    ],
)
def test_mail_is_set_up_with_an_smtp_host_or_another_real_backend(settings, backend, host, set_up):
    settings.EMAIL_BACKEND, settings.EMAIL_HOST = backend, host
    assert mail_is_set_up() is set_up
    assert (unmailed("its author") == "") is set_up


# --- the request and its words -----------------------------------------------------------------


@pytest.mark.django_db
def test_without_a_mail_server_the_request_is_kept_not_sent_and_its_link_answers_it(
    actor, no_mail, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as queued:
        request = dispatch_request(actor=actor, question="What is the expense limit?", contact_id=farah(actor.org).pk)
    assert queued == []  # nothing to deliver: no task is queued
    assert request.status == HumanRequest.Status.NOT_SENT
    notice = undelivered(request)
    assert notice is not None
    assert notice.words == NO_MAIL_WORDS
    assert notice.link == answer_url(request) == answer_url(HumanRequest.objects.get(pk=request.pk))
    assert request_from_token(notice.link.rstrip("/").rsplit("/", 1)[1]) == request
    record_answer(request=request, answer="500 euros a month.")
    request.refresh_from_db()
    assert request.status == HumanRequest.Status.ANSWERED
    assert undelivered(request) is None


@pytest.mark.django_db
def test_a_queued_request_whose_mail_server_went_away_is_kept_not_sent(actor, settings):
    request = dispatch_request(actor=actor, question="q", contact_id=farah(actor.org).pk)
    settings.EMAIL_BACKEND, settings.EMAIL_HOST = SMTP, ""
    assert deliver_request(request_id=request.pk) == "not sent"
    request.refresh_from_db()
    assert request.status == HumanRequest.Status.NOT_SENT
    assert deliver_request(request_id=request.pk) == "skipped"  # safe twice


@pytest.mark.django_db
def test_an_unreachable_mail_server_reads_in_words_and_the_raw_error_stays_in_the_record(actor, mail_refused):
    request = dispatch_request(actor=actor, question="q", contact_id=farah(actor.org).pk)
    with pytest.raises(RetryLater):
        deliver_request(request_id=request.pk)
    request.refresh_from_db()
    assert request.status == HumanRequest.Status.QUEUED
    assert "SMTP server unreachable" in request.last_error  # for the logs and the admin's detail
    notice = undelivered(request)
    assert notice is not None
    assert notice.words == UNREACHABLE_WORDS
    assert "Errno" not in notice.words + notice.short
    assert notice.link == answer_url(request)


@pytest.mark.django_db
def test_a_request_that_ran_out_of_retries_or_was_refused_says_so_in_words(actor):
    request = dispatch_request(actor=actor, question="q", contact_id=farah(actor.org).pk)
    HumanRequest.objects.filter(pk=request.pk).update(
        status=HumanRequest.Status.FAILED, attempts=MAX_RETRIES + 1, last_error="gave up after 7 attempts: [Errno 111]"
    )
    request.refresh_from_db()
    notice = undelivered(request)
    assert notice is not None
    assert notice.words == ("Brain tried 7 times to reach the mail server and stopped: copy this link and pass it on.")
    HumanRequest.objects.filter(pk=request.pk).update(attempts=1, last_error="recipient refused: {...}")
    request.refresh_from_db()
    notice = undelivered(request)
    assert notice is not None
    assert notice.words.startswith("Brain could not send it by email, as the address or Brain's settings")
    assert notice.words.endswith("(an admin sees why on this request in the admin): copy this link and pass it on.")
    assert "refused: {" not in notice.words


@pytest.mark.django_db
def test_a_sent_request_has_nothing_to_pass_on(actor):
    request = dispatch_request(actor=actor, question="q", contact_id=farah(actor.org).pk)
    assert deliver_request(request_id=request.pk) == "sent"
    request.refresh_from_db()
    assert undelivered(request) is None


@pytest.mark.django_db
def test_an_expired_link_is_not_offered(actor, no_mail, settings):
    request = dispatch_request(actor=actor, question="q", contact_id=farah(actor.org).pk)
    settings.BRAIN_ANSWER_LINK_DAYS = 0
    notice = undelivered(request)
    assert notice is not None
    assert notice.link == ""
    assert notice.words.startswith("No mail server is set up, and its answer link expired on ")


# --- who may see the link ------------------------------------------------------------------------


@pytest.mark.django_db
def test_only_the_asker_and_the_organisations_admins_get_the_link(org, other_org, no_mail):
    asker = make_user(org)
    request = dispatch_request(actor=make_actor(org, asker), question="q", contact_id=farah(org).pk)
    admin = make_org_admin(org)
    assert get_undelivered(user=asker, request=request) is not None
    assert get_undelivered(user=admin, request=request) is not None
    assert get_undelivered(user=make_user(org), request=request) is None  # another member
    assert get_undelivered(user=make_org_admin(other_org), request=request) is None  # another organisation's admin
    assert get_undelivered(user=make_user(other_org), request=request) is None


@pytest.mark.django_db
def test_the_request_page_shows_the_asker_the_link_in_words_and_nobody_else(org, other_org, mail_refused):
    asker = make_user(org)
    request = dispatch_request(actor=make_actor(org, asker), question="Expense limit?", contact_id=farah(org).pk)
    with pytest.raises(RetryLater):
        deliver_request(request_id=request.pk)
    html = logged_in(asker).get(f"/requests/{request.public_id}/").content.decode()
    assert UNREACHABLE_WORDS in html
    assert answer_url(request) in html
    assert 'data-copy="answer-link"' in html
    assert "Errno" not in html
    assert "Connection refused" not in html
    listing = logged_in(asker).get("/requests/").content.decode()
    assert "Could not reach the mail server; trying again" in listing
    assert "Errno" not in listing
    for outsider in (make_user(org), make_user(other_org), make_org_admin(other_org)):
        client = logged_in(outsider)
        assert client.get(f"/requests/{request.public_id}/").status_code == 404
        assert answer_url(request) not in client.get("/requests/").content.decode()


@pytest.mark.django_db
def test_the_admin_shows_its_admins_the_link_the_words_and_the_raw_error(org, other_org, mail_refused):
    request = dispatch_request(actor=make_actor(org), question="q", contact_id=farah(org).pk)
    with pytest.raises(RetryLater):
        deliver_request(request_id=request.pk)
    url = f"/admin/contacts/humanrequest/{request.pk}/change/"
    page = logged_in(make_org_admin(org)).get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert UNREACHABLE_WORDS in html
    assert answer_url(request) in html
    assert "SMTP server unreachable" in html  # the raw reason, in the admin's detail only
    listing = logged_in(make_org_admin(org)).get("/admin/contacts/humanrequest/").content.decode()
    assert "Could not reach the mail server; trying again" in listing
    theirs = logged_in(make_org_admin(other_org)).get(url)
    assert answer_url(request) not in theirs.content.decode()
    assert theirs.status_code in (302, 404)


# --- the person asked answers signed in -----------------------------------------------------------


@pytest.mark.django_db
def test_the_person_asked_sees_and_answers_their_question_signed_in_audited_like_the_link(org, other_org, no_mail):
    person = make_user(org)
    asker = make_user(org)
    request = dispatch_request(
        actor=make_actor(org, asker), question="Expense limit?", contact_id=farah(org, user=person).pk
    )
    assert list(list_questions_for(user=person)) == [request]
    assert list(list_questions_for(user=asker)) == []
    page = logged_in(person).get("/requests/").content.decode()
    assert "Questions for you" in page
    assert "Expense limit?" in page
    answered = logged_in(person).post(f"/requests/{request.public_id}/answer/", {"answer": "500 euros."})
    assert answered.status_code == 302
    request.refresh_from_db()
    assert (request.status, request.answer) == (HumanRequest.Status.ANSWERED, "500 euros.")
    record = AuditRecord.objects.get(action="request.answered")
    assert (record.org, record.user, record.via, record.target) == (org, person, "web", f"request {request.public_id}")
    assert list(list_questions_for(user=person)) == []
    record_answer(request=request, answer="600 euros, since March.")  # again, through the link
    by_link = AuditRecord.objects.filter(action="request.answered").order_by("-pk").first()
    assert by_link is not None
    assert (by_link.user, by_link.via, by_link.who) == (None, "link", "Farah Finance (answer link)")
    assert by_link.details["again"] is True


@pytest.mark.django_db
def test_nobody_else_can_answer_in_place_and_a_contact_outside_the_organisation_is_not_offered(org, other_org, no_mail):
    person = make_user(org)
    request = dispatch_request(actor=make_actor(org), question="q", contact_id=farah(org, user=person).pk)
    for outsider in (make_user(org), make_org_admin(org), make_user(other_org)):
        refused = logged_in(outsider).post(f"/requests/{request.public_id}/answer/", {"answer": "forged"})
        assert refused.status_code == 404
    request.refresh_from_db()
    assert request.status == HumanRequest.Status.NOT_SENT
    Membership.objects.filter(org=org, user=person).delete()  # no longer a member: not theirs to answer
    assert list(list_questions_for(user=person)) == []
    with pytest.raises(Exception, match="No such question"):
        get_question_for(user=person, public_id=request.public_id)


@pytest.mark.django_db
def test_an_empty_answer_in_place_is_refused_on_the_page_and_keeps_the_question(org, no_mail):
    person = make_user(org)
    request = dispatch_request(actor=make_actor(org), question="q", contact_id=farah(org, user=person).pk)
    page = logged_in(person).post(f"/requests/{request.public_id}/answer/", {"answer": "   "})
    assert page.status_code == 400
    assert "Write an answer before sending." in page.content.decode()
    assert not AuditRecord.objects.filter(action="request.answered").exists()


@pytest.mark.django_db
def test_the_thanks_page_does_not_claim_the_asker_was_emailed_without_a_mail_server(org, no_mail):
    request = dispatch_request(actor=make_actor(org), question="q", contact_id=farah(org).pk)
    token = answer_url(request).rstrip("/").rsplit("/", 1)[1]
    html = Client().post(f"/answer/{token}/", {"answer": "Yes."}).content.decode()
    assert "sees it on their requests page in Brain" in html
    assert "told by email" not in html


@pytest.mark.django_db
def test_the_job_form_says_reports_are_not_mailed_without_a_mail_server(org, settings):
    Features.objects.filter(org=org).update(jobs=True)
    client = logged_in(make_user(org))
    with_mail = client.get("/jobs/new/")
    assert with_mail.status_code == 200
    assert 'id="no-mail"' not in with_mail.content.decode()
    settings.EMAIL_BACKEND, settings.EMAIL_HOST = SMTP, ""
    assert (
        "No mail server is set up on this Brain, so reports are not mailed" in client.get("/jobs/new/").content.decode()
    )


def test_a_contact_of_another_organisation_is_never_listed(db):
    org, other = make_org(), make_org()
    person = make_user(org)
    Membership.objects.create(org=other, user=person, role=Membership.MEMBER)
    dispatch_request(actor=make_actor(other), question="theirs", contact_id=farah(other, user=make_user(other)).pk)
    assert list(list_questions_for(user=person)) == []


@pytest.mark.django_db
def test_a_call_whose_link_could_not_be_texted_gives_the_asker_the_link(actor, twilio):
    def calls_only(request: dict) -> Reply:
        if request["path"].endswith("/Messages.json"):
            return as_json(503, {"code": 20500, "message": "Service Unavailable", "status": 503})
        return twilio_api(request)

    twilio.respond = calls_only
    person = Contact.objects.create(org=actor.org, name="Cal Caller", phone="+447700900123", channels=["call"])
    request = dispatch_request(actor=actor, question="q", contact_id=person.pk)
    assert deliver_request(request_id=request.pk) == "sent"
    request.refresh_from_db()
    assert [r["path"].rsplit("/", 1)[1] for r in twilio.requests] == ["Messages.json", "Calls.json"]
    notice = undelivered(request)
    assert notice is not None
    assert notice.words == (
        "The call went through, but Brain could not send the answer link in writing: copy this link and pass it on."
    )
    assert notice.link == answer_url(request)
