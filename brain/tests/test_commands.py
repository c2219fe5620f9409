from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brain.models import ApiToken
from brain.services import authenticate_token
from conftest import make_user

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_token_prints_only_the_token(org):
    user = make_user(org, email="priya@example.com")
    printed = run("create_token", "--org", org.slug, "--email", "PRIYA@example.com", "--scopes", "read,write")
    token = authenticate_token(printed.strip())
    assert printed.count("\n") == 1
    assert token is not None
    assert token.user == user
    assert token.scopes == ["read", "write"]


def test_create_token_explains_what_is_wrong(org):
    make_user(org, email="priya@example.com")
    with pytest.raises(CommandError, match="No organisation"):
        run("create_token", "--org", "nope", "--email", "priya@example.com")
    with pytest.raises(CommandError, match="No user"):
        run("create_token", "--org", org.slug, "--email", "nobody@example.com")
    with pytest.raises(CommandError, match="Scopes"):
        run("create_token", "--org", org.slug, "--email", "priya@example.com", "--scopes", "admin")


def test_revoke_token_by_value_or_prefix(org):
    make_user(org, email="priya@example.com")
    first = run("create_token", "--org", org.slug, "--email", "priya@example.com").strip()
    second = run("create_token", "--org", org.slug, "--email", "priya@example.com", "--expires", "7").strip()
    run("revoke_token", first)
    run("revoke_token", ApiToken.objects.get(hashed__isnull=False, revoked_at__isnull=True).prefix)
    assert authenticate_token(first) is None
    assert authenticate_token(second) is None
    with pytest.raises(CommandError):
        run("revoke_token", "brn_unknown")


def test_bootstrap_prints_the_token_once():
    first = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    again = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    assert "Token:        brn_" in first
    assert "http://brain.test/mcp" in first
    assert "password" in first
    assert "brn_" not in again


def test_check_health_exits_non_zero_when_something_is_down(settings):
    assert "ok   database" in run("check_health", "--only", "database,redis")
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with pytest.raises(SystemExit) as info:
        run("check_health", "--only", "redis")
    assert info.value.code == 1


def test_the_admin_login_page_answers_anonymous_visitors(client):
    assert client.get("/admin/login/").status_code == 200
    assert client.get("/admin/").status_code == 302
