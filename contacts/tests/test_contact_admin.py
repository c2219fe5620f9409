"""The contact form in the admin: channels as boxes that say which address each needs, addresses
checked against the channels chosen (E.164 for phones), and the admin's organisation by default."""

from __future__ import annotations

import pytest

from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from contacts.models import Contact
from contacts.validation import channel_problems, is_e164, normalise_phone

pytestmark = pytest.mark.django_db


def form(org, **fields):
    return {"org": org.pk, "name": "Farah", "topics": "invoices", "email": "", "slack": "", "phone": "",
            "active": "on", **fields}  # fmt: skip


@pytest.mark.parametrize("number", ["+34600111222", "+14155550100", "+442071838750"])
def test_e164_numbers_pass(number):
    assert is_e164(number)


@pytest.mark.parametrize(
    "number",
    ["34600111222", "+0600111222", "+34 600 111 222", "+1" + "2" * 15, "+14155550100\n", "+", "+34abc", "+٣٤٦٠٠١١١٢٢٢"],
)
def test_anything_else_is_not_an_e164_number(number):
    assert not is_e164(number)


def test_spaces_dashes_dots_and_brackets_are_dropped_from_a_phone_number():
    assert normalise_phone("+34 (600) 111-22.2") == "+34600111222"


def test_each_channel_needs_its_address():
    problems = channel_problems(channels=["email", "slack", "call", "whatsapp"], email="", slack="", phone="")
    assert problems == {
        "email": "The email channel needs an email address.",
        "slack": "The Slack channel needs a Slack incoming-webhook URL, or a user or channel id.",
        "phone": "Phone calls and WhatsApp need a phone number: a plus sign, the country code and the number, "
        "e.g. +34600111222.",
    }
    assert channel_problems(channels=["whatsapp"], email="", slack="", phone="+34600111222") == {}


def test_a_phone_number_is_checked_even_when_no_phone_channel_is_chosen():
    assert "phone" in channel_problems(channels=["email"], email="f@example.com", slack="", phone="600111222")


def test_the_form_shows_each_channel_as_a_box_with_the_address_it_needs(org):
    page = logged_in(make_org_admin(org)).get("/admin/contacts/contact/add/").content.decode()
    assert page.count('type="checkbox" name="channels"') == 4
    assert "Email: needs the email address" in page
    assert "Phone call: needs the phone number" in page
    assert "WhatsApp: needs the phone number" in page
    assert "Slack: needs the Slack address" in page


def test_channels_not_set_up_here_say_so(org, settings):
    settings.BRAIN_SLACK_BOT_TOKEN = ""
    settings.BRAIN_TWILIO_ACCOUNT_SID = ""
    page = logged_in(make_org_admin(org)).get("/admin/contacts/contact/add/").content.decode()
    assert "WhatsApp: needs the phone number (not set up on this Brain yet: the BRAIN_TWILIO_* settings)" in page
    assert "Email: needs the email address (" not in page


def test_a_new_contact_starts_in_the_admins_only_organisation_with_email_ticked(org):
    page = logged_in(make_org_admin(org)).get("/admin/contacts/contact/add/")
    initial = page.context["adminform"].form.initial
    assert initial["org"] == org.pk
    assert page.context["adminform"].form["channels"].value() == ["email"]


def test_an_admin_of_two_organisations_or_an_operator_chooses_the_organisation(org, other_org):
    for user in (make_org_admin(org, other_org), make_operator()):
        page = logged_in(user).get("/admin/contacts/contact/add/")
        assert "org" not in page.context["adminform"].form.initial


def test_a_chosen_channel_without_its_address_is_a_form_error_and_nothing_is_saved(org):
    client = logged_in(make_org_admin(org))
    page = client.post("/admin/contacts/contact/add/", form(org, channels=["email", "whatsapp"]))
    assert page.status_code == 200
    errors = page.context["adminform"].form.errors
    assert errors["email"] == ["The email channel needs an email address."]
    assert "Phone calls and WhatsApp need a phone number" in errors["phone"][0]
    assert not Contact.objects.exists()


def test_a_phone_number_that_is_not_e164_is_a_form_error(org):
    page = logged_in(make_org_admin(org)).post(
        "/admin/contacts/contact/add/", form(org, channels=["call"], phone="600 111 222")
    )
    assert "write it in E.164 form" in page.context["adminform"].form.errors["phone"][0]
    assert not Contact.objects.exists()


def test_a_valid_contact_is_saved_with_its_phone_number_tidied(org):
    client = logged_in(make_org_admin(org))
    fields = form(org, channels=["email", "call"], email="f@example.com", phone="+34 600-111-222")
    page = client.post("/admin/contacts/contact/add/", fields)
    assert page.status_code == 302
    contact = Contact.objects.get()
    assert contact.channels == ["email", "call"]
    assert contact.phone == "+34600111222"
