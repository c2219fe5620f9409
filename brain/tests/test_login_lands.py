"""Logging in without asking for a page comes back to /, which chooses: the overview for an
organisation's admin, search for a member."""

from __future__ import annotations

import pytest
from django.test import Client

from brain.tests.admin_client import make_org_admin
from conftest import make_org, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough secret"


@pytest.mark.parametrize(("make", "lands"), [(make_org_admin, "/overview/"), (make_user, "/memory/search/")])
def test_the_login_form_comes_back_to_home_which_chooses_the_page(make, lands):
    make(make_org(), username="lee", password=PASSWORD)
    client = Client()
    logged = client.post("/login/", {"username": "lee", "password": PASSWORD})
    assert logged["Location"] == "/"
    assert client.get("/")["Location"] == lands


def test_a_page_asked_for_before_the_login_is_where_it_comes_back_to():
    make_user(make_org(), username="lee", password=PASSWORD)
    client = Client()
    assert client.post("/login/?next=/jobs/", {"username": "lee", "password": PASSWORD})["Location"] == "/jobs/"
