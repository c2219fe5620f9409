"""Brain's own 400, 403, 404 and 500 pages, each with a way back; its icon at /favicon.ico; and the
API docs pages built from files on this server only."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from brain.tests.admin_client import logged_in, make_org_admin
from conftest import make_user

pytestmark = pytest.mark.django_db

FAVICON = '<link rel="icon" href="/static/brain/favicon.svg" type="image/svg+xml">'


def test_a_missing_page_is_brains_own_with_a_way_back(org):
    page = logged_in(make_user(org)).get("/no/such/page/")
    html = page.content.decode()
    assert page.status_code == 404
    assert "<title>Page not found · Brain</title>" in html
    assert FAVICON in html
    assert '<a class="button" href="/">Back to Brain</a>' in html
    assert 'href="/requests/"' in html


def test_a_missing_page_offers_the_login_to_someone_logged_out(db):
    html = Client().get("/no/such/page/").content.decode()
    assert 'href="/login/">Log in</a>' in html


def test_a_refusal_is_brains_own_page(org):
    page = logged_in(make_org_admin(org)).get("/admin/django_celery_beat/periodictask/")
    assert page.status_code == 403
    assert "You may not open this page" in page.content.decode()
    assert "Back to Brain" in page.content.decode()


def test_a_form_sent_without_its_csrf_token_is_explained(org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(org))
    page = client.post("/connect/", {"name": "x"})
    assert page.status_code == 403
    assert "This form could not be sent" in page.content.decode()


def test_a_request_for_an_unknown_host_gets_brains_bad_request_page(db):
    page = Client().get("/login/", HTTP_HOST="elsewhere.example")
    assert page.status_code == 400
    assert "Brain could not read this request" in page.content.decode()
    assert FAVICON in page.content.decode()


def test_the_server_error_page_renders_without_a_request_context(db):
    page = server_error(RequestFactory().get("/"))
    html = page.content.decode()
    assert page.status_code == 500
    assert "Something went wrong on Brain's side" in html
    assert FAVICON in html
    assert "Back to Brain" in html


def test_favicon_ico_leads_to_brains_icon(db):
    page = Client().get("/favicon.ico")
    assert page.status_code == 301
    assert page["Location"] == "/static/brain/favicon.svg"


def test_the_api_docs_pages_name_no_other_host(db):
    redoc = Client().get("/api/v1/redoc/").content.decode()
    swagger = Client().get("/api/v1/docs/").content.decode()
    for html in (redoc, swagger):
        assert "googleapis" not in html
        assert "https://" not in html
        assert FAVICON in html
    assert '<script src="/static/brain/local-images.js"></script>' in redoc
    assert '"validatorUrl": null' in swagger
