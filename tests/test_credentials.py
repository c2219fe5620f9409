"""The first start's credentials: printed after the web answers, and shown again on request
without any secret that was not just made."""

from __future__ import annotations

import http.server
import threading
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from brain.core.services import add_member
from brain.models import AuditRecord, Organisation
from launcher.ready import answers, wait_until_answers
from tests.conftest import free_port


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_credentials_name_the_organisation_admin_and_token_but_print_no_secret():
    first = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    password = first.split("password ", 1)[1].split()[0]
    token = first.split("Token:", 1)[1].split()[0]

    shown = run("credentials", "--base-url", "http://brain.test")

    assert "Organisation: Acme (acme)" in shown
    assert "http://brain.test/admin/  users: admin (operator)" in shown
    assert "./brainctl manage changepassword admin" in shown
    assert f"brn_{token[4:12]}… (first token) of admin" in shown
    assert "http://brain.test/connect/" in shown
    assert password not in shown
    assert token not in shown


@pytest.mark.django_db
def test_credentials_on_an_empty_install_say_how_to_make_the_first_organisation():
    assert "./brainctl run makes the first one" in run("credentials", "--base-url", "http://brain.test")


@pytest.mark.django_db
def test_bootstrap_run_again_says_how_to_set_a_new_password_instead_of_showing_it():
    run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    again = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    assert "./brainctl manage changepassword admin" in again


@pytest.mark.django_db
def test_reset_makes_a_new_admin_password_shown_once_and_audited():
    first = run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    old = first.split("password ", 1)[1].split()[0]

    reset = run("credentials", "--reset", "--base-url", "http://brain.test")
    new = reset.split("Password:", 1)[1].split()[0]

    admin = User.objects.get(username="admin")
    assert new != old
    assert admin.check_password(new)
    assert not admin.check_password(old)
    assert new not in admin.password  # only the hash is kept
    assert new not in run("credentials", "--base-url", "http://brain.test")
    record = AuditRecord.objects.get(action="user.password_reset")
    assert (record.target, record.who, record.via) == ("user admin", "operator (command line)", "command")
    assert new not in str(record.details)


@pytest.mark.django_db
def test_reset_names_the_admins_when_asked_for_someone_who_is_not_one():
    run("bootstrap", "--org", "acme", "--base-url", "http://brain.test")
    member = User.objects.create_user(username="priya", password="unchanged-secret-1")
    add_member(org=Organisation.objects.get(slug="acme"), user=member)

    with pytest.raises(CommandError, match=r"priya is not an admin .*admins: admin"):
        run("credentials", "--reset", "--user", "priya", "--base-url", "http://brain.test")

    member.refresh_from_db()
    assert member.check_password("unchanged-secret-1")
    assert not AuditRecord.objects.filter(action="user.password_reset").exists()


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def closed_port() -> int:
    """A free loopback port with nothing listening on it yet."""
    return free_port()


def test_the_wait_returns_once_the_server_answers_and_not_before(closed_port):
    url = f"http://127.0.0.1:{closed_port}/healthz"
    tries: list[bool] = []
    servers: list[http.server.HTTPServer] = []

    def start_server_on_third_try() -> None:
        tries.append(True)
        if len(tries) == 3:
            server = http.server.HTTPServer(("127.0.0.1", closed_port), Health)
            servers.append(server)
            threading.Thread(target=server.serve_forever, daemon=True).start()

    assert not answers(url)
    try:
        assert wait_until_answers(url, progress=lambda: len(tries), tick=start_server_on_third_try, poll=0.01)
        assert len(tries) == 3  # no answer before the server was there, and no try after it answered
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_the_wait_gives_up_when_nothing_moves(closed_port):
    now = [0.0]

    def clock() -> float:
        now[0] += 10  # each look at the clock is ten seconds later: no real waiting
        return now[0]

    url = f"http://127.0.0.1:{closed_port}/healthz"
    assert not wait_until_answers(url, progress=lambda: "same", idle=30, poll=0.001, clock=clock)


def test_the_wait_goes_on_while_the_processes_print_and_stops_when_asked(closed_port):
    now, printed = [0.0], [0]

    def clock() -> float:
        now[0] += 10
        return now[0]

    def tick() -> None:
        printed[0] += 1

    url = f"http://127.0.0.1:{closed_port}/healthz"
    stop = lambda: printed[0] >= 20  # noqa: E731
    assert not wait_until_answers(
        url, progress=lambda: printed[0], stopping=stop, tick=tick, idle=30, poll=0.001, clock=clock
    )
    assert printed[0] == 20  # 200 "seconds" passed, but the output kept growing, so it did not give up
