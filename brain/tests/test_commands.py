from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brain.core.services import authenticate_token
from brain.models import ApiToken
from conftest import make_user
from launcher.__main__ import base_url

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
    run("revoke_token", ApiToken.objects.get(org=org, hashed__isnull=False, revoked_at__isnull=True).prefix)
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


def test_bootstrap_prints_the_url_of_the_instance_every_time():
    first = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test/")
    again = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    line = "Brain:        http://brain.test/  (open it in a browser and log in)"
    assert first.splitlines()[0] == again.splitlines()[0] == line


def test_the_launcher_gives_bootstrap_the_url_the_operator_set_or_the_one_it_binds(monkeypatch):
    monkeypatch.delenv("BRAIN_BASE_URL", raising=False)
    assert base_url("0.0.0.0", "8000") == "http://127.0.0.1:8000"  # noqa: S104 (a string, binds nothing)
    assert base_url("10.0.0.5", "9000") == "http://10.0.0.5:9000"
    monkeypatch.setenv("BRAIN_BASE_URL", "https://brain.example.com/")
    assert base_url("127.0.0.1", "8000") == "https://brain.example.com"


def test_check_health_exits_non_zero_when_something_is_down(settings):
    assert "ok   database" in run("check_health", "--only", "database,redis")
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with pytest.raises(SystemExit) as info:
        run("check_health", "--only", "redis")
    assert info.value.code == 1


def test_the_admin_login_page_answers_anonymous_visitors(client):
    assert client.get("/admin/login/").status_code == 200
    assert client.get("/admin/").status_code == 302
