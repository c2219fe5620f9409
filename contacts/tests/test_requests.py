"""Routing, preview and dispatch rules, delivery, signed answer links, and saving answers."""

from __future__ import annotations

import pytest
from django.core import signing

from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from conftest import make_actor, make_org, make_user
from contacts.models import Contact, HumanRequest
from contacts.services import (
    answer_url,
    deliver_request,
    dispatch_request,
    parse_contact_id,
    record_answer,
    request_from_token,
    route,
    save_answer_to_memory,
    save_contact_topics,
)

pytestmark = pytest.mark.django_db


def contact(org, name, topics, **kw):
    kw.setdefault("email", f"{name.split()[0].lower()}@example.com")
    kw.setdefault("channels", ["email"])
    made = Contact.objects.create(org=org, name=name, topics=topics, **kw)
    save_contact_topics(made)
    return made


@pytest.fixture
def people(org):
    return {
        "finance": contact(org, "Farah Finance", "invoices, budgets, payroll, expenses"),
        "security": contact(org, "Ivo Security", "passwords, VPN, laptops, access requests"),
        "quiet": contact(org, "Quiet Person", "everything", active=False),
    }


def test_routing_picks_the_contact_whose_topics_fit(actor, people):
    assert route(actor=actor, question="Who approves my travel expenses?").contact == people["finance"]
    assert route(actor=actor, question="I lost my VPN access").contact == people["security"]


def test_a_named_person_must_be_a_configured_contact(actor, people):
    assert route(actor=actor, question="q", contact_name="farah finance").contact == people["finance"]
    with pytest.raises(NotFound, match="not a configured contact"):
        route(actor=actor, question="q", contact_name="Elon")
    with pytest.raises(NotFound):
        route(actor=actor, question="q", contact_name="Quiet Person")  # inactive


def test_a_contact_with_no_allowed_channel_fails_in_the_preview(actor, people):
    with pytest.raises(InvalidArgument, match="No configured contact can be reached over whatsapp"):
        route(actor=actor, question="q", allowed=["whatsapp"])


def test_another_organisations_contact_cannot_be_named_or_used(actor, other_org):
    theirs = contact(other_org, "Their Expert", "anything")
    with pytest.raises(NotFound):
        route(actor=actor, question="q", contact_name="Their Expert")
    with pytest.raises(NotFound):
        dispatch_request(actor=actor, question="q", contact_id=theirs.pk)


def test_requester_directed_only_reaches_the_requester(actor, people):
    with pytest.raises(InvalidArgument, match="only for contacting the user themselves"):
        dispatch_request(actor=actor, question="q", contact_id=people["finance"].pk, requester_directed=True)
    me = contact(actor.org, "Me Myself", "my own answers", user=actor.user)
    request = dispatch_request(actor=actor, question="q", contact_id=me.pk, requester_directed=True)
    assert request.requester_directed
    assert request.contact == me


def test_dispatch_queues_delivery_after_commit_and_delivery_is_safe_twice(
    actor, people, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        request = dispatch_request(
            actor=actor,
            question="What is our expense limit?",
            contact_id=people["finance"].pk,
            gap_analysis="The policy page has no number.",
        )
    assert request.status == "queued"
    assert len(callbacks) == 1
    assert deliver_request(request_id=request.pk) == "sent"
    assert deliver_request(request_id=request.pk) == "skipped"
    request.refresh_from_db()
    assert request.status == "sent"
    assert request.attempts == 1
    assert len(mailoutbox) == 1
    assert "/answer/" in mailoutbox[0].body
    assert "no number" in mailoutbox[0].body


def test_the_answer_link_is_signed_and_expires(actor, people, settings):
    request = dispatch_request(actor=actor, question="q", contact_id=people["finance"].pk)
    token = answer_url(request).rstrip("/").rsplit("/", 1)[1]
    assert request_from_token(token) == request
    with pytest.raises(PermissionDenied, match="not valid"):
        request_from_token(token[:-2] + "xx")
    with pytest.raises(PermissionDenied, match="not valid"):
        request_from_token(signing.TimestampSigner(salt="other").sign(request.public_id))
    settings.BRAIN_ANSWER_LINK_DAYS = 0
    with pytest.raises(PermissionDenied, match="expired"):
        request_from_token(token)


def test_an_answer_is_recorded_the_requester_told_and_it_can_be_saved(
    actor, people, mailoutbox, django_capture_on_commit_callbacks
):
    request = dispatch_request(actor=actor, question="What is our expense limit?", contact_id=people["finance"].pk)
    with pytest.raises(InvalidArgument):
        record_answer(request=request, answer="   ")
    with django_capture_on_commit_callbacks(execute=True):
        record_answer(request=request, answer="500 euros a month.")
    request.refresh_from_db()
    assert request.status == "answered"
    assert any("answered your question" in m.subject for m in mailoutbox)
    saved = save_answer_to_memory(actor=actor, request_id=request.public_id)
    assert saved.saved_document is not None
    assert saved.saved_document.title.startswith("Farah Finance on:")
    assert "500 euros" in saved.saved_document.content
    colleague = make_actor(actor.org, make_user(actor.org))
    with pytest.raises(NotFound):
        save_answer_to_memory(actor=colleague, request_id=request.public_id)


def test_read_only_actors_cannot_dispatch(org, people):
    with pytest.raises(PermissionDenied):
        dispatch_request(actor=make_actor(org, scopes="read"), question="q", contact_id=people["finance"].pk)


def test_requests_stay_with_their_organisation(people):
    assert HumanRequest.objects.filter(org=make_org()).count() == 0


def test_an_organisation_with_requests_can_be_deleted_but_a_contact_with_requests_cannot(actor, people):
    from django.db.models import RestrictedError

    from brain.models import Organisation

    dispatch_request(actor=actor, question="q", contact_id=people["finance"].pk)
    with pytest.raises(RestrictedError):
        people["finance"].delete()  # its requests are history; deactivate the contact instead
    Organisation.objects.filter(pk=actor.org.pk).delete()
    assert not HumanRequest.objects.exists()


@pytest.mark.parametrize("digits", ["²", "٣", "١٢", "9" * 19])
def test_a_contact_id_takes_only_ascii_digits(digits):
    with pytest.raises(InvalidArgument, match="is not a contact id"):
        parse_contact_id(f"con_{digits}")


def test_a_contact_id_in_arabic_indic_digits_is_not_read_as_the_contact_with_those_digits(people):
    pk = people["finance"].pk
    with pytest.raises(InvalidArgument):
        parse_contact_id("con_" + str(pk).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")))
    assert parse_contact_id(f"con_{pk}") == pk


def test_an_answer_brain_cannot_store_is_refused_and_nothing_changes(actor, people):
    request = dispatch_request(actor=actor, question="What is our expense limit?", contact_id=people["finance"].pk)
    with pytest.raises(InvalidArgument, match="NUL character"):
        record_answer(request=request, answer="500\x00 euros")
    request.refresh_from_db()
    assert request.status == "queued"
    assert request.answer == ""


def test_saving_a_request_id_that_cannot_be_one_is_not_found(actor):
    with pytest.raises(NotFound):
        save_answer_to_memory(actor=actor, request_id="req_\x00")
