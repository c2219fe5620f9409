"""Failed logins are throttled per address, on the site's login page and the admin's: nobody can lock
someone else out by typing their name."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client, RequestFactory
from django.utils import timezone

from brain.faces.login_throttle import client_ip
from brain.models import Membership
from conftest import make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough secret"
HERE, THERE = "10.0.0.1", "10.0.0.2"
PAGES = ["/login/", "/admin/login/"]


@pytest.fixture
def people(org):
    alice = make_user(org, role=Membership.ADMIN, username="alice", password=PASSWORD)
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    bob = make_user(org, username="bob", password=PASSWORD)
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    return alice, bob


def attempt(page, username, password, address):
    return Client().post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response):
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def fail(page, username, address, times):
    """Wrong passwords: the form again with its error, and the lockout page for the one that reaches the limit."""
    statuses = [attempt(page, username, "wrong password", address).status_code for _ in range(times)]
    return statuses[-1]


@pytest.mark.parametrize("page", PAGES)
def test_too_many_wrong_passwords_lock_the_address_for_everyone_and_the_account_nowhere_else(page, people, settings):
    assert fail(page, "alice", HERE, settings.AXES_FAILURE_LIMIT - 1) == 200
    assert fail(page, "alice", HERE, 1) == 429
    locked = attempt(page, "alice", PASSWORD, HERE)
    assert locked.status_code == 429
    assert "_auth_user_id" not in locked.client.session
    assert "Too many failed logins" in locked.content.decode()
    assert "15 minutes" in locked.content.decode()
    assert attempt(page, "bob", PASSWORD, HERE).status_code == 429  # the address, for another account
    assert logged_in(attempt(page, "alice", PASSWORD, THERE))  # the account itself, from elsewhere
    assert logged_in(attempt(page, "bob", PASSWORD, THERE))


@pytest.mark.parametrize("page", PAGES)
def test_guessing_from_many_addresses_never_locks_the_owner_out(page, people, settings):
    for n in range(3):
        assert fail(page, "alice", f"10.1.0.{n}", settings.AXES_FAILURE_LIMIT) == 429
    assert logged_in(attempt(page, "alice", PASSWORD, HERE))


def test_one_failure_short_of_the_limit_still_logs_in(people, settings):
    assert fail("/login/", "alice", HERE, settings.AXES_FAILURE_LIMIT - 1) == 200
    assert logged_in(attempt("/login/", "alice", PASSWORD, HERE))


def test_logging_in_to_ones_own_account_does_not_wipe_the_addresses_failures(people, settings):
    # Else anyone with an account could guess at another's password without end, resetting in between.
    assert fail("/login/", "alice", HERE, settings.AXES_FAILURE_LIMIT - 1) == 200
    assert logged_in(attempt("/login/", "bob", PASSWORD, HERE))
    assert fail("/login/", "alice", HERE, 1) == 429


def test_failures_on_both_pages_count_together(people, settings):
    fail("/login/", "alice", HERE, settings.AXES_FAILURE_LIMIT - 1)
    fail("/admin/login/", "alice", HERE, 1)
    assert attempt("/login/", "alice", PASSWORD, HERE).status_code == 429


def test_the_lock_lifts_after_the_cool_off(people, settings):
    fail("/login/", "alice", HERE, settings.AXES_FAILURE_LIMIT)
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert logged_in(attempt("/login/", "alice", PASSWORD, HERE))


def test_behind_a_proxy_the_address_is_the_one_the_proxy_appended(settings):
    request = RequestFactory().post("/login/", REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 10.0.0.7")
    assert client_ip(request) == "10.9.9.9"
    settings.BRAIN_BEHIND_PROXY = True
    assert client_ip(request) == "10.0.0.7"
