"""The Connectors page asks for one kind's fields at a time, each with its own control, and says a
connection's errors in words, never an error's class name."""

from __future__ import annotations

import re

import httpx
import pytest
from django.test import Client

from brain.models import Category
from conftest import make_org, make_user
from connectors.kinds import KINDS, error_in_words, reach_failure
from connectors.models import Connection

pytestmark = pytest.mark.django_db

OLD_FORM = "GitHub could not be reached (ConnectError); trying again later."


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


def fieldset(page: str, kind: str) -> str:
    found = re.search(rf'<fieldset class="kind-fields" data-kind="{kind}"[^>]*>.*?</fieldset>', page, re.S)
    assert found is not None, kind
    return found[0]


def test_before_a_kind_is_chosen_no_kinds_fields_are_open_and_the_add_form_waits():
    org = make_org()
    page = logged_in(make_user(org, role="admin")).get("/connectors/").content.decode()
    assert "Choose what to connect" in page
    assert re.search(r"<form method=\"post\" action=\"/connectors/\" data-kind-form hidden>", page)
    for slug in KINDS:
        assert re.search(rf'data-kind="{slug}" hidden disabled>', page)


def test_the_chosen_kind_alone_is_open_and_each_field_has_its_own_control():
    org = make_org()
    page = logged_in(make_user(org, role="admin")).get("/connectors/?kind=imap").content.decode()
    imap = fieldset(page, "imap")
    assert "hidden disabled" not in imap.split(">")[0]
    assert 'name="imap-credential_host" type="text"' in imap  # a server's name: one line, in the open
    assert 'name="imap-credential_port" type="text" inputmode="numeric"' in imap
    assert 'name="imap-credential_password" type="password"' in imap  # a secret
    assert '<textarea id="id_imap-option_folders"' in imap  # a list, one per line
    assert '<select id="id_imap-option_tls" name="imap-option_tls">' in imap  # one of a few
    assert '<option value="starttls">' in imap
    for slug in set(KINDS) - {"imap"}:
        assert re.search(rf'data-kind="{slug}" hidden disabled>', page)
    sentry = fieldset(page, "sentry")
    assert 'name="sentry-option_organisation" type="text"' in sentry  # a single value is a single line


def test_a_kind_chosen_and_refused_comes_back_with_its_fields_open():
    org = make_org()
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    form = {"org": org.pk, "kind": "slack", "name": "Slack", "category": category.pk}
    answer = logged_in(make_user(org, role="admin")).post("/connectors/", form)
    assert answer.status_code == 400
    assert "hidden disabled" not in fieldset(answer.content.decode(), "slack").split(">")[0]


def test_a_failed_connection_to_a_source_is_said_in_words():
    said = reach_failure("GitHub", httpx.ConnectError("[Errno 111] Connection refused"))
    assert said.startswith("GitHub could not be reached from this Brain's server: check")
    assert "ConnectError" not in said
    assert "Errno" not in said
    assert reach_failure("Slack", httpx.ReadTimeout("x")) == "Slack took too long to answer: it may be busy. " + (
        "Brain tries again by itself."
    )
    assert (
        reach_failure("Sentry", ValueError("odd"))
        == "Sentry could not be reached just now. Brain tries again by itself."
    )
    assert error_in_words(OLD_FORM) == reach_failure("GitHub", "ConnectError")
    assert error_in_words("The mail server refused the password.") == "The mail server refused the password."


def test_an_error_saved_with_a_class_name_shows_in_words_in_a_box_of_its_own():
    org = make_org()
    admin = make_user(org, role="admin")
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    Connection.objects.create(
        org=org, kind="github", name="GitHub: api", category=category, options={}, last_error=OLD_FORM
    )
    page = logged_in(admin).get("/connectors/").content.decode()
    assert "(ConnectError)" not in page
    assert '<p class="notice error connection-error">GitHub could not be reached from this Brain' in page
