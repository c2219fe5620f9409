"""The audit trail as admins read it: sign-ins and sign-outs written by the login pages, the
nightly retention purge, and the page /audit/<slug>/ with its filters and its export."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.test import Client, RequestFactory
from django.utils import timezone

from brain.core.audit import purge_expired_audit, record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.invitations import answer_invitation, invite_member, withdraw_invitation
from brain.core.services import add_member
from brain.core.sign_ins import record_sign_in
from brain.models import AuditRecord, Membership, Organisation
from brain.tasks import purge_expired_audit_task
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough password 42"


def person(*orgs: Organisation, username: str = "rosa") -> User:
    user = make_user(orgs[0], username=username)
    for org in orgs[1:]:
        add_member(org=org, user=user, role=Membership.MEMBER)
    user.set_password(PASSWORD)
    user.save()
    return user


def records(action: str) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(action=action).order_by("org_id"))


# --- signing in and out ---------------------------------------------------------------------------


def test_a_password_sign_in_is_recorded_once_in_each_of_the_persons_organisations(org, other_org):
    rosa = person(org, other_org)
    response = Client().post("/login/", {"username": "rosa", "password": PASSWORD})
    assert response.status_code == 302
    signed_in = records("user.signed_in")
    assert [r.org for r in signed_in] == sorted([org, other_org], key=lambda o: o.pk)
    assert {(r.user, r.via, r.target, r.details["method"]) for r in signed_in} == {
        (rosa, "web", "user rosa", "password")
    }
    assert signed_in[0].details["address"] == "127.0.0.1"


def test_the_admins_login_page_is_recorded_as_the_admin(org):
    admin = make_org_admin(org, username="ada")
    admin.set_password(PASSWORD)
    admin.save()
    Client().post("/admin/login/", {"username": "ada", "password": PASSWORD, "next": "/admin/"})
    assert [(r.via, r.who) for r in records("user.signed_in")] == [("admin", "ada")]


def test_a_login_another_way_in_made_is_left_to_it(org):
    """Single sign-on writes its own record from its callback; the signal must not write a second."""
    rosa = person(org)
    sent = RequestFactory().post("/sso/callback/")
    rosa.backend = "django.contrib.auth.backends.RemoteUserBackend"  # type: ignore[attr-defined]  # not the password one
    user_logged_in.send(sender=User, request=sent, user=rosa)
    assert records("user.signed_in") == []
    record_sign_in(user=rosa, method="sso", via="sso")
    assert [r.details for r in records("user.signed_in")] == [{"method": "sso"}]
    rosa.backend = "django.contrib.auth.backends.ModelBackend"  # type: ignore[attr-defined]
    user_logged_in.send(sender=User, request=sent, user=rosa)
    assert [r.details["method"] for r in records("user.signed_in")] == ["sso", "password"]


def test_a_session_made_in_code_is_no_sign_in(org):
    Client().force_login(person(org))  # a test client's or a shell's session: no login form was sent
    assert records("user.signed_in") == []


def test_signing_out_is_recorded(org):
    person(org)
    client = Client()
    client.post("/login/", {"username": "rosa", "password": PASSWORD})
    client.post("/logout/")
    assert [(r.action, r.who, r.via) for r in records("user.signed_out")] == [("user.signed_out", "rosa", "web")]


def test_a_wrong_password_for_an_account_is_recorded_and_a_made_up_name_is_not(org):
    person(org)
    Client().post("/login/", {"username": "rosa", "password": "not it"})
    Client().post("/login/", {"username": "nobody-here", "password": "not it"})
    failed = records("user.sign_in_failed")
    assert [(r.target, r.user, r.who, r.details) for r in failed] == [
        ("user rosa", None, "someone at 127.0.0.1", {"method": "password", "address": "127.0.0.1"})
    ]
    assert records("user.signed_in") == []


# --- keeping records for the organisation's period -----------------------------------------------


def aged(org: Organisation, days: float, action: str = "token.created") -> AuditRecord:
    record = record_audit(actor=None, org=org, action=action, target="t")
    AuditRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - timedelta(days=days))
    return record


def test_the_nightly_purge_deletes_what_is_past_each_organisations_period_once(org, other_org):
    Organisation.objects.filter(pk=other_org.pk).update(audit_days=30)
    old_mine, kept_mine = aged(org, 366), aged(org, 364)
    old_theirs, kept_theirs = aged(other_org, 31), aged(other_org, 29)

    assert purge_expired_audit_task() == 2
    assert purge_expired_audit_task() == 0  # twice is once

    left = set(AuditRecord.objects.exclude(action="audit.purged").values_list("pk", flat=True))
    assert left == {kept_mine.pk, kept_theirs.pk}
    assert not {old_mine.pk, old_theirs.pk} & left
    purged = records("audit.purged")
    assert [(r.org_id, r.via, r.who, r.details["records"]) for r in purged] == sorted(
        [(org.pk, "nightly", "audit purge", 1), (other_org.pk, "nightly", "audit purge", 1)]
    )
    assert {r.details["days"] for r in purged} == {365, 30}


def test_the_period_is_at_least_30_days_and_an_admin_sets_it_on_the_organisation(org):
    assert org.audit_days == 365
    for days in (29, 3651):
        org.audit_days = days
        with pytest.raises(ValidationError, match="audit_days"):
            org.full_clean()
    page = logged_in(make_org_admin(org)).get(f"/admin/brain/organisation/{org.pk}/change/")
    assert b'name="audit_days"' in page.content


def test_a_purge_with_nothing_due_writes_nothing(org):
    aged(org, 10)
    assert purge_expired_audit(now=timezone.now()) == 0
    assert records("audit.purged") == []


# --- the page ---------------------------------------------------------------------------------------


def trail(client: Client, org: Organisation, **params: str) -> str:
    response = client.get(f"/audit/{org.slug}/", params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def test_only_the_organisations_admins_and_operators_read_its_trail(org, other_org):
    record_audit(actor=None, org=org, action="token.revoked", target="token brn_mine")
    record_audit(actor=None, org=other_org, action="token.revoked", target="token brn_theirs")
    assert Client().get(f"/audit/{org.slug}/").status_code == 302  # to the login
    assert logged_in(make_user(org)).get(f"/audit/{org.slug}/").status_code == 403
    assert logged_in(make_user(org)).get("/audit/").status_code == 403
    theirs = logged_in(make_org_admin(other_org))
    assert theirs.get(f"/audit/{org.slug}/").status_code == 404
    assert "brn_mine" not in trail(theirs, other_org)
    mine = trail(logged_in(make_org_admin(org)), org)
    assert "brn_mine" in mine
    assert "brn_theirs" not in mine
    assert "brn_theirs" in trail(logged_in(make_operator()), other_org)
    assert logged_in(make_org_admin(org)).get("/audit/")["Location"] == f"/audit/{org.slug}/"


def test_the_filters_narrow_by_action_person_interface_days_and_target(org):
    Organisation.objects.filter(pk=org.pk).update(time_zone="Pacific/Auckland")
    org.refresh_from_db()
    ada = make_org_admin(org, username="ada")
    record_audit(actor=ada, org=org, via="web", action="token.created", target="token brn_aaaa1111")
    record_audit(actor=ada, org=org, via="admin", action="membership.changed", target="membership of bob")
    record_audit(actor=None, org=org, action="token.revoked", target="token brn_bbbb2222")
    early = record_audit(actor=None, org=org, action="document.deleted", target="doc_7")
    # 23:30 UTC on 1 March is 12:30 on 2 March in Auckland: the day the page filters by is Auckland's.
    AuditRecord.objects.filter(pk=early.pk).update(created_at=datetime(2026, 3, 1, 23, 30, tzinfo=ZoneInfo("UTC")))
    client = logged_in(ada)

    def targets(**params: str) -> set[str]:
        html = trail(client, org, **params)
        return {t for t in ("brn_aaaa1111", "membership of bob", "brn_bbbb2222", "doc_7") if t in html}

    assert targets(action="token.") == {"brn_aaaa1111", "brn_bbbb2222"}
    assert targets(action="token.revoked") == {"brn_bbbb2222"}
    assert targets(person="ADA") == {"brn_aaaa1111", "membership of bob"}
    assert targets(via="admin") == {"membership of bob"}
    assert targets(target="bbbb") == {"brn_bbbb2222"}
    assert targets(since="2026-03-02", until="2026-03-02") == {"doc_7"}
    assert targets(until="2026-03-01") == set()
    assert "2026-03-02 12:30" in trail(client, org, target="doc_7")  # shown in the organisation's zone


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"since": "last tuesday"}, "is not a day; write it as YYYY-MM-DD"),
        ({"since": "2026-03-05", "until": "2026-03-01"}, "swap the two days"),
        ({"via": "telepathy"}, "Choose an interface"),
        ({"target": "x" * 201}, "longer than 200 characters"),
        ({"person": "a\x00b"}, "NUL character"),
    ],
)
def test_a_filter_that_cannot_be_one_is_answered_in_words(org, params, words):
    response = logged_in(make_org_admin(org)).get(f"/audit/{org.slug}/", params)
    assert response.status_code == 400
    assert words in response.content.decode()


def test_the_first_and_last_days_there_are_are_days_like_any_other(org):
    org.time_zone = "Asia/Tokyo"  # the first day there is, in Tokyo, began before any UTC moment
    org.save()
    record_audit(actor=None, org=org, action="token.created", target="brn_edge0000")
    client = logged_in(make_org_admin(org))
    for params in ({"until": "9999-12-31"}, {"since": "0001-01-01", "until": "9999-12-31"}):
        response = client.get(f"/audit/{org.slug}/", params)
        assert response.status_code == 200
        assert "brn_edge0000" in response.content.decode()


def test_the_page_shows_the_newest_first_fifty_at_a_time(org):
    for n in range(53):
        record = record_audit(actor=None, org=org, action="token.created", target=f"token n{n:03d}")
        AuditRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - timedelta(minutes=100 - n))
    client = logged_in(make_org_admin(org))
    first = trail(client, org, action="token.")
    assert first.index("n052") < first.index("n051")
    assert "n002" not in first
    assert "page 1 of 2" in first
    assert 'rel="next"' in first
    second = trail(client, org, action="token.", page="2")
    assert "n002" in second
    assert "n000" in second
    assert "n052" not in second


# --- the export -------------------------------------------------------------------------------------


def export(client: Client, org: Organisation, **form: str) -> Any:
    return client.post(f"/audit/{org.slug}/export/", form)


def test_an_export_holds_the_filtered_records_and_is_itself_recorded(org, other_org):
    ada = make_org_admin(org, username="ada")
    record_audit(actor=None, org=org, action="token.revoked", target='=HYPERLINK("http://x")')
    record_audit(actor=None, org=org, action="document.deleted", target="doc_1", details={"title": "Plan"})
    record_audit(actor=None, org=other_org, action="token.revoked", target="theirs")
    client = logged_in(ada)

    as_csv = export(client, org, format="csv", action="token.")
    assert as_csv.status_code == 200
    assert as_csv["Content-Disposition"].startswith(f'attachment; filename="audit-{org.slug}-')
    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert [(r["action"], r["target"]) for r in rows] == [("token.revoked", '\'=HYPERLINK("http://x")')]

    as_lines = export(client, org, format="jsonl", target="doc_")
    lines = [json.loads(line) for line in as_lines.content.decode().splitlines()]
    assert [(line["action"], line["details"]) for line in lines] == [("document.deleted", {"title": "Plan"})]

    exported = records("audit.exported")
    assert [(r.org, r.user, r.via, r.details) for r in exported] == [
        (org, ada, "web", {"format": "csv", "records": 1, "filters": {"action": "token."}}),
        (org, ada, "web", {"format": "jsonl", "records": 1, "filters": {"target": "doc_"}}),
    ]


def test_an_export_is_refused_to_a_member_and_another_organisations_admin(org, other_org):
    assert export(logged_in(make_user(org)), org, format="csv").status_code == 403
    assert export(logged_in(make_org_admin(other_org)), org, format="csv").status_code == 404
    assert records("audit.exported") == []


def test_an_export_with_bad_input_exports_nothing_and_says_why(org):
    client = logged_in(make_org_admin(org))
    response = export(client, org, format="xlsx")
    assert response.status_code == 302
    assert "Choose an export format" in client.get(response["Location"]).content.decode()
    assert records("audit.exported") == []


# --- withdrawing an invitation ----------------------------------------------------------------------


def test_an_admin_withdraws_an_open_invitation_and_the_trail_says_so(org, other_org):

    admin = make_org_admin(org, username="ada")
    nina = make_user(other_org, username="nina", email="nina@example.com")
    invite_member(actor=make_actor(org, admin, via="admin"), email="nina@example.com")
    offer = nina.invitations.get(org=org)
    with pytest.raises(NotFound):
        withdraw_invitation(actor=make_actor(other_org, make_org_admin(other_org)), invitation_id=offer.pk)
    page = logged_in(admin).post(
        "/admin/brain/membershipinvitation/", {"action": "withdraw", "_selected_action": [offer.pk]}
    )
    assert page.status_code == 302
    assert not nina.invitations.exists()
    record = AuditRecord.objects.get(action="member.invitation_withdrawn")
    assert (record.org, record.user, record.via, record.details) == (
        org,
        admin,
        "admin",
        {"user": "nina", "role": "member"},
    )
    with pytest.raises(NotFound):
        answer_invitation(user=nina, invitation_id=str(offer.public_id), accept=True)
    invite_member(actor=make_actor(org, admin, via="admin"), email="nina@example.com")
    accepted = answer_invitation(user=nina, invitation_id=str(nina.invitations.get().public_id), accept=True)
    with pytest.raises(InvalidArgument, match="remove their membership"):
        withdraw_invitation(actor=make_actor(org, admin, via="admin"), invitation_id=accepted.pk)
