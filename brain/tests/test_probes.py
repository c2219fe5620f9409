"""/healthz and /readyz: no token, any host, plain HTTP, and nothing sensitive in the body."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_liveness_answers_ok_without_a_token_from_any_host():
    response = Client(HTTP_HOST="10.1.2.3:8000").get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@override_settings(SECURE_SSL_REDIRECT=True)
def test_probes_are_not_redirected_to_https():
    assert Client().get("/healthz").status_code == 200
    assert Client().get("/readyz").status_code in (200, 503)


def test_readiness_names_the_parts_and_whether_each_answers():
    response = Client(HTTP_HOST="10.1.2.3:8000").get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ready", "checks": {"database": True, "redis": True, "model": True}}


def test_readiness_is_503_while_redis_is_away_and_says_nothing_sensitive(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"] is False
    assert "127.0.0.1" not in response.content.decode()
    assert "Error" not in response.content.decode()


def test_other_methods_go_to_the_app_as_usual():
    assert Client().post("/healthz").status_code == 404
