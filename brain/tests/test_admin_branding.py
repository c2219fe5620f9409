"""The admin is Brain's: its name and icon on every page; Celery beat's tables are the operators'."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_org

pytestmark = pytest.mark.django_db

BEAT_PAGES = [
    "/admin/django_celery_beat/periodictask/",
    "/admin/django_celery_beat/intervalschedule/",
    "/admin/django_celery_beat/crontabschedule/",
    "/admin/django_celery_beat/solarschedule/",
    "/admin/django_celery_beat/clockedschedule/",
]
FAVICON = '<link rel="icon" href="/static/brain/favicon.svg" type="image/svg+xml">'


def test_every_admin_page_is_titled_brain_and_shows_its_icon(org):
    client = logged_in(make_org_admin(org))
    for url in ("/admin/", "/admin/brain/organisation/", f"/admin/brain/organisation/{org.pk}/change/"):
        html = client.get(url).content.decode()
        assert FAVICON in html, url
        assert '<div id="site-name"><a href="/admin/">Brain</a></div>' in html, url
        assert "| Brain admin</title>" in html, url
    assert "Brain administration" in client.get("/admin/").content.decode()


def test_the_login_page_of_the_admin_is_branded_too(db):
    from django.test import Client

    html = Client().get("/admin/login/").content.decode()
    assert FAVICON in html
    assert "Django administration" not in html


def test_an_organisation_admin_never_sees_beats_tables_even_with_permissions_on_them(org):
    admin = make_org_admin(org)
    admin.user_permissions.add(*Permission.objects.filter(content_type__app_label="django_celery_beat"))
    client = logged_in(admin)

    assert "django_celery_beat" not in client.get("/admin/").content.decode()
    for url in BEAT_PAGES:
        assert client.get(url).status_code == 403, url
    assert client.get("/admin/django_celery_beat/").status_code == 404


def test_an_operator_keeps_beats_tables(db):
    make_org()
    client = logged_in(make_operator())
    assert "/admin/django_celery_beat/periodictask/" in client.get("/admin/").content.decode()
    for url in BEAT_PAGES:
        assert client.get(url).status_code == 200, url
