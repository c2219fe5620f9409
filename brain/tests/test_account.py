"""A member's own account: name, time zone, password and tokens, changed only for themselves."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client

from brain.core.accounts import chosen_zone, get_time_zone, reset_password, update_account
from brain.core.errors import InvalidArgument, NotFound
from brain.core.services import revoke_token
from brain.faces.times import READER_ZONE
from brain.models import ApiToken, AuditRecord, Membership
from brain.templatetags.brain_pages import local_time
from conftest import make_actor, make_token, make_user

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery"
NEW = "a new long pass 7"


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def test_a_member_sets_their_name_and_a_time_zone_checked_against_zoneinfo(org):
    user = make_user(org)
    update_account(user=user, first_name=" Priya ", last_name="Raman", time_zone="Europe/Berlin")
    user.refresh_from_db()
    assert (user.first_name, user.last_name, get_time_zone(user=user)) == ("Priya", "Raman", "Europe/Berlin")

    for wrong in ("Mars/Olympus", "localtime", "../etc/passwd"):
        with pytest.raises(InvalidArgument, match="not an IANA time zone"):
            update_account(user=user, first_name="Priya", last_name="", time_zone=wrong)
    assert get_time_zone(user=user) == "Europe/Berlin"

    update_account(user=user, first_name="Priya", last_name="", time_zone="")
    assert chosen_zone(user=user) is None  # each organisation's zone again


def test_a_name_brain_cannot_store_is_refused(org):
    user = make_user(org)
    with pytest.raises(InvalidArgument, match="NUL"):
        update_account(user=user, first_name="Pri\x00ya", last_name="", time_zone="")
    with pytest.raises(InvalidArgument, match="longer than 150"):
        update_account(user=user, first_name="", last_name="x" * 151, time_zone="")


def test_times_on_pages_follow_the_zone_the_reader_chose_and_mails_keep_the_organisations(org):
    org.time_zone = "Europe/Madrid"
    org.save()
    moment = datetime(2026, 3, 4, 8, 15, tzinfo=UTC)
    assert "2026-03-04 09:15 Europe/Madrid" in local_time(moment, org)
    reset = READER_ZONE.set(lambda: chosen_zone(user=make_user(org)))  # chose none: the organisation's
    try:
        assert "09:15 Europe/Madrid" in local_time(moment, org)
    finally:
        READER_ZONE.reset(reset)
    user = make_user(org)
    update_account(user=user, first_name="", last_name="", time_zone="America/New_York")
    page = signed_in(user).get("/account/")
    assert page.status_code == 200
    reset = READER_ZONE.set(lambda: chosen_zone(user=user))
    try:
        assert "2026-03-04 03:15 America/New_York" in local_time(moment, org)
    finally:
        READER_ZONE.reset(reset)


def test_the_account_page_changes_only_the_signed_in_member(org):
    priya, other = make_user(org), make_user(org, first_name="Untouched")
    client = signed_in(priya)

    saved = client.post(
        "/account/",
        {"part": "details", "first_name": "Priya", "last_name": "R", "time_zone": "Asia/Kolkata", "user": other.pk},
    )

    assert saved.status_code == 302
    priya.refresh_from_db()
    other.refresh_from_db()
    assert priya.first_name == "Priya"
    assert get_time_zone(user=priya) == "Asia/Kolkata"
    assert other.first_name == "Untouched"
    assert get_time_zone(user=other) == ""
    page = client.get("/account/").content.decode()
    assert '<option value="Asia/Kolkata" selected>' in page


def test_a_wrong_time_zone_on_the_page_is_said_in_words(org):
    client = signed_in(make_user(org))
    response = client.post("/account/", {"part": "details", "first_name": "", "last_name": "", "time_zone": "Nowhere"})
    assert response.status_code == 400
    assert "is not an IANA time zone" in response.content.decode()


def test_changing_the_password_needs_the_old_one_keeps_the_session_and_is_audited(org):
    user = make_user(org)
    client = signed_in(user)

    wrong = client.post(
        "/account/",
        {
            "part": "password",
            "old_password": "guess",
            "new_password1": "a new long pass 7",
            "new_password2": "a new long pass 7",
        },
    )
    assert wrong.status_code == 400
    assert "Your old password was entered incorrectly" in wrong.content.decode()

    changed = client.post(
        "/account/",
        {
            "part": "password",
            "old_password": PASSWORD,
            "new_password1": "a new long pass 7",
            "new_password2": "a new long pass 7",
        },
    )

    assert changed.status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW)
    assert client.get("/account/").status_code == 200  # still signed in on this device
    record = AuditRecord.objects.get(org=org, action="user.password_changed")
    assert (record.who, record.via, record.target) == (user.username, "web", f"user {user.username}")
    assert NEW not in str(record.details)


def test_an_operator_reset_is_audited_in_every_organisation_of_the_person(org, other_org):
    user = make_user(org, role=Membership.ADMIN)
    Membership.objects.create(org=other_org, user=user)
    password = reset_password(user=user)
    user.refresh_from_db()
    assert user.check_password(password)
    assert set(AuditRecord.objects.filter(action="user.password_reset").values_list("org", flat=True)) == {
        org.pk,
        other_org.pk,
    }


def test_a_member_lists_creates_and_revokes_their_own_tokens_on_the_page(org):
    user = make_user(org)
    theirs = make_token(org, make_user(org))
    client = signed_in(user)

    made = client.post("/account/", {"part": "token", "org": org.pk, "name": "laptop", "access": "read", "expires": ""})
    assert made.status_code == 302
    token = ApiToken.objects.get(user=user)
    page = client.get("/account/").content.decode()
    plaintext = page.split('id="token-value">')[1].split("<")[0]
    assert plaintext.startswith(f"brn_{token.prefix}_")
    assert f"brn_{theirs.token.prefix}" not in page  # another member's token is not listed
    assert plaintext not in client.get("/account/").content.decode()  # shown once

    revoked = client.post(f"/connect/tokens/{token.pk}/revoke/", {"confirm": "yes", "back": "account"})
    assert revoked["Location"] == "/account/"
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_hostile_member_cannot_revoke_another_members_token_by_id(org):
    victim = make_token(org, make_user(org))
    hostile = make_user(org)
    client = signed_in(hostile)

    for form in ({"confirm": "yes", "back": "account"}, {"confirm": "yes"}, {}):
        answer = client.post(f"/connect/tokens/{victim.token.pk}/revoke/", form, follow=True)
        assert "No such token." in answer.content.decode()
        assert f"brn_{victim.token.prefix}" not in answer.content.decode()
    with pytest.raises(NotFound):
        revoke_token(actor=make_actor(org, hostile, via="web"), token_id=victim.token.pk)

    victim.token.refresh_from_db()
    assert victim.token.revoked_at is None
    assert not AuditRecord.objects.filter(action="token.revoked").exists()


def test_the_account_page_needs_a_login_and_is_never_cached(org):
    assert Client().get("/account/").status_code == 302
    response = signed_in(make_user(org)).get("/account/")
    assert "no-store" in response["Cache-Control"]
