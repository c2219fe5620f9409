"""Inviting a member by email: the account, the membership and a link that sets a password once,
within PASSWORD_RESET_TIMEOUT; someone with an account is invited and joins only when they accept,
signed in as themselves, before it expires; organisation admins invite only into their own
organisations."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.utils import timezone

from brain.core.errors import InvalidArgument, PermissionDenied
from brain.core.invitations import InvitationTokens, invite_member, link_lifetime
from brain.models import AuditRecord, Membership, MembershipInvitation
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough secret"


@pytest.fixture
def admin_actor(org):
    return make_actor(org, make_org_admin(org), via="admin")


def sent_link() -> str:
    found = re.search(r"http\S+/invitation/\S+/", str(mail.outbox[-1].body))
    assert found is not None, mail.outbox[-1].body
    return found.group().removeprefix(settings.BRAIN_BASE_URL)


def logs_in(username: str, password: str) -> bool:
    response = Client().post("/login/", {"username": username, "password": password})
    return response.status_code == 302 and response["Location"] == "/"  # / then chooses the page


def invite(actor, email="nina@example.com", role=Membership.MEMBER, *, capture):
    with capture(execute=True):
        return invite_member(actor=actor, email=email, role=role)


def test_an_invitation_makes_an_account_nobody_can_log_in_to_yet_and_mails_the_link(
    org, admin_actor, django_capture_on_commit_callbacks
):
    invitation = invite(admin_actor, capture=django_capture_on_commit_callbacks)

    user = User.objects.get(email="nina@example.com")
    assert user.username == "nina@example.com"
    assert not user.has_usable_password()
    assert Membership.objects.get(org=org, user=user).role == Membership.MEMBER
    assert invitation.new_account
    assert invitation.sent
    assert mail.outbox[-1].to == ["nina@example.com"]
    assert f"The link works once, for {link_lifetime()}" in mail.outbox[-1].body
    assert sent_link().startswith("/invitation/")
    record = AuditRecord.objects.get(org=org, action="member.invited")
    assert record.details == {"email": "nina@example.com", "role": "member", "new_account": True, "again": False}


def test_the_link_sets_a_password_once_and_then_the_member_logs_in(
    org, admin_actor, django_capture_on_commit_callbacks
):
    invite(admin_actor, capture=django_capture_on_commit_callbacks)
    link = sent_link()
    web = Client()

    page = web.get(link)
    assert page.status_code == 200
    assert "Welcome to Brain" in page.content.decode()
    assert org.name in page.content.decode()
    done = web.post(link, {"new_password1": PASSWORD, "new_password2": PASSWORD})

    assert done.status_code == 302
    assert done["Location"] == "/login/?username=nina%40example.com"
    assert 'value="nina@example.com"' in web.get(done["Location"]).content.decode()
    assert logs_in("nina@example.com", PASSWORD)
    again = web.get(link)
    assert again.status_code == 400
    assert "This invitation link cannot be used" in again.content.decode()
    web.post(link, {"new_password1": "another long secret", "new_password2": "another long secret"})
    assert logs_in("nina@example.com", PASSWORD)
    assert not logs_in("nina@example.com", "another long secret")


def test_a_weak_or_mismatched_password_is_refused_and_the_link_still_works(
    org, admin_actor, django_capture_on_commit_callbacks
):
    invite(admin_actor, capture=django_capture_on_commit_callbacks)
    link = sent_link()
    refused = Client().post(link, {"new_password1": "12345678", "new_password2": "12345678"})
    assert refused.status_code == 400
    assert "This password is too common." in refused.content.decode()
    assert not User.objects.get(email="nina@example.com").has_usable_password()
    assert Client().get(link).status_code == 200


def test_an_expired_link_is_refused_with_a_clear_page(
    org, admin_actor, django_capture_on_commit_callbacks, monkeypatch
):
    invite(admin_actor, capture=django_capture_on_commit_callbacks)
    link = sent_link()
    later = InvitationTokens()._now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 1)
    monkeypatch.setattr(InvitationTokens, "_now", lambda self: later)

    page = Client().get(link)

    assert page.status_code == 400
    assert f"An invitation link works once, for {link_lifetime()}" in page.content.decode()
    assert Client().post(link, {"new_password1": PASSWORD, "new_password2": PASSWORD}).status_code == 400
    assert not User.objects.get(email="nina@example.com").has_usable_password()


def test_the_link_lifetime_is_django_s_password_reset_timeout(settings):
    settings.PASSWORD_RESET_TIMEOUT = 3 * 86_400
    assert link_lifetime() == "3 days"
    settings.PASSWORD_RESET_TIMEOUT = 7200
    assert link_lifetime() == "2 hours"


@pytest.mark.parametrize("link", ["/invitation/xx/yy/", "/invitation/MQ/set-password/", "/invitation/%00/a/"])
def test_a_forged_link_is_refused(org, link):
    assert Client().get(link).status_code == 400


def test_a_password_reset_token_is_no_invitation(org, admin_actor, django_capture_on_commit_callbacks):
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    invite(admin_actor, capture=django_capture_on_commit_callbacks)
    user = User.objects.get(email="nina@example.com")
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    assert Client().get(f"/invitation/{uid}/{default_token_generator.make_token(user)}/").status_code == 400


def test_only_an_admin_of_the_organisation_may_invite(org):
    with pytest.raises(PermissionDenied):
        invite_member(actor=make_actor(org), email="nina@example.com")
    assert not User.objects.filter(email="nina@example.com").exists()


def test_someone_with_an_account_is_invited_and_nothing_changes_until_they_accept(
    org, other_org, admin_actor, django_capture_on_commit_callbacks
):
    existing = make_user(other_org, email="Kim@Example.com", password=PASSWORD)

    invitation = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)

    assert not invitation.new_account
    assert invitation.membership is None
    assert invitation.sent
    assert not Membership.objects.filter(org=org, user=existing).exists()
    assert "/invitation/" not in mail.outbox[-1].body
    assert f"{settings.BRAIN_BASE_URL}/invitations/" in mail.outbox[-1].body
    assert "Nothing changes until you answer" in mail.outbox[-1].body
    assert User.objects.get(pk=existing.pk).check_password(PASSWORD)
    record = AuditRecord.objects.get(org=org, action="member.invited")
    assert record.target == f"invitation {invitation.offer.public_id}"

    kim = logged_in(existing)
    assert kim.get("/")["Location"] == "/invitations/"  # where someone with an invitation lands
    page = kim.get("/invitations/").content.decode()
    assert org.name in page
    accepted = kim.post(f"/invitations/{invitation.offer.public_id}/accept/")

    assert accepted.status_code == 302
    assert Membership.objects.get(org=org, user=existing).role == Membership.MEMBER
    assert MembershipInvitation.objects.get().answer == MembershipInvitation.ACCEPTED
    assert AuditRecord.objects.filter(org=org, action="member.invitation_accepted", user=existing).exists()
    assert kim.get("/")["Location"] != "/invitations/"
    again = kim.post(f"/invitations/{invitation.offer.public_id}/accept/")
    assert again.status_code == 400
    assert "accepted this invitation" in again.content.decode()
    with pytest.raises(InvalidArgument, match="already a member"):
        invite_member(actor=admin_actor, email="kim@example.com")


def test_an_invitation_can_be_declined_and_adds_nobody(org, other_org, admin_actor, django_capture_on_commit_callbacks):
    existing = make_user(other_org, email="kim@example.com", password=PASSWORD)
    invitation = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)
    kim = logged_in(existing)

    declined = kim.post(f"/invitations/{invitation.offer.public_id}/decline/", follow=True)

    assert "You declined the invitation" in declined.content.decode()
    assert not Membership.objects.filter(org=org, user=existing).exists()
    assert kim.post(f"/invitations/{invitation.offer.public_id}/accept/").status_code == 400
    assert not Membership.objects.filter(org=org, user=existing).exists()
    assert org.name not in kim.get("/invitations/").content.decode()
    invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)  # may be asked again
    assert MembershipInvitation.objects.filter(user=existing, answer=MembershipInvitation.OPEN).count() == 1


def test_another_signed_in_person_cannot_accept_an_invitation(
    org, other_org, admin_actor, django_capture_on_commit_callbacks
):
    existing = make_user(other_org, email="kim@example.com", password=PASSWORD)
    invitation = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)
    someone = make_user(other_org, email="mallory@example.com")

    answer = logged_in(someone).post(f"/invitations/{invitation.offer.public_id}/accept/")

    assert answer.status_code == 404
    assert "No such invitation for you" in answer.content.decode()
    assert not Membership.objects.filter(org=org).exclude(user=admin_actor.user).exists()
    assert MembershipInvitation.objects.get().answer == MembershipInvitation.OPEN
    assert Client().post(f"/invitations/{invitation.offer.public_id}/accept/").status_code == 302  # to the login
    assert not Membership.objects.filter(org=org, user=existing).exists()


def test_an_expired_invitation_cannot_be_accepted(org, other_org, admin_actor, django_capture_on_commit_callbacks):
    existing = make_user(other_org, email="kim@example.com", password=PASSWORD)
    invitation = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)
    MembershipInvitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    kim = logged_in(existing)

    answer = kim.post(f"/invitations/{invitation.offer.public_id}/accept/")

    assert answer.status_code == 400
    assert "expired on" in answer.content.decode()
    assert "ask an admin of" in answer.content.decode()
    assert not Membership.objects.filter(org=org, user=existing).exists()
    assert kim.get("/")["Location"] != "/invitations/"


def test_inviting_someone_with_an_account_again_renews_the_open_invitation_with_the_new_role(
    org, other_org, admin_actor, django_capture_on_commit_callbacks
):
    existing = make_user(other_org, email="kim@example.com", password=PASSWORD)
    first = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)
    MembershipInvitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))

    again = invite(admin_actor, "kim@example.com", Membership.ADMIN, capture=django_capture_on_commit_callbacks)

    assert again.again
    assert again.offer.pk == first.offer.pk
    assert len(mail.outbox) == 2
    assert "as an admin" in mail.outbox[-1].body
    logged_in(existing).post(f"/invitations/{again.offer.public_id}/accept/")
    assert Membership.objects.get(org=org, user=existing).role == Membership.ADMIN
    assert User.objects.get(pk=existing.pk).is_staff  # an organisation admin works in the admin


def test_an_invited_admin_can_use_the_admin(org, admin_actor, django_capture_on_commit_callbacks):
    invite(admin_actor, role=Membership.ADMIN, capture=django_capture_on_commit_callbacks)
    user = User.objects.get(email="nina@example.com")
    assert user.is_staff
    assert not user.is_superuser
    assert "as an admin" in mail.outbox[-1].body


def test_a_bad_email_is_refused(admin_actor):
    with pytest.raises(InvalidArgument, match="not an email address"):
        invite_member(actor=admin_actor, email="nina at example")


def test_the_members_list_offers_the_invitation_page_with_the_admins_organisations_only(org, other_org):
    client = logged_in(make_org_admin(org))
    assert 'href="/admin/brain/membership/invite/"' in client.get("/admin/brain/membership/").content.decode()
    page = client.get("/admin/brain/membership/invite/")
    assert page.status_code == 200
    offered = {str(value) for value, _ in page.context["form"].fields["org"].choices}
    assert offered == {str(org.pk)}
    assert f"for {link_lifetime()}" in page.content.decode()


def test_an_organisation_admin_cannot_invite_into_another_organisation(org, other_org):
    client = logged_in(make_org_admin(org))
    page = client.post(
        "/admin/brain/membership/invite/", {"email": "nina@example.com", "role": "member", "org": other_org.pk}
    )
    assert page.status_code == 200
    assert "Select a valid choice" in page.content.decode()
    assert not User.objects.filter(email="nina@example.com").exists()
    assert not mail.outbox


def test_a_member_without_the_admin_role_cannot_open_the_invitation_page(org, other_org):
    admin_elsewhere = make_org_admin(other_org)
    Membership.objects.create(org=org, user=admin_elsewhere, role=Membership.MEMBER)
    client = logged_in(admin_elsewhere)
    page = client.post("/admin/brain/membership/invite/", {"email": "nina@example.com", "role": "admin", "org": org.pk})
    assert "Select a valid choice" in page.content.decode()
    assert not User.objects.filter(email="nina@example.com").exists()


@pytest.mark.django_db(transaction=True)
def test_the_invitation_page_invites_and_says_so(org):
    client = logged_in(make_org_admin(org))
    page = client.post(
        "/admin/brain/membership/invite/", {"email": "nina@example.com", "role": "member", "org": org.pk}, follow=True
    )
    assert "Invitation sent to nina@example.com" in page.content.decode()
    assert Membership.objects.filter(org=org, user__email="nina@example.com").exists()
    assert len(mail.outbox) == 1


@pytest.mark.django_db(transaction=True)
def test_the_invitation_page_says_someone_with_an_account_joins_when_they_accept(org, other_org):
    make_user(other_org, email="kim@example.com")
    client = logged_in(make_org_admin(org))
    page = client.post(
        "/admin/brain/membership/invite/", {"email": "kim@example.com", "role": "member", "org": org.pk}, follow=True
    )
    assert "Invitation sent to kim@example.com, who has an account already" in page.content.decode()
    assert not Membership.objects.filter(org=org, user__email="kim@example.com").exists()


def test_an_operator_may_invite_into_any_organisation(org, django_capture_on_commit_callbacks):
    client = logged_in(make_operator())
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/brain/membership/invite/", {"email": "nina@example.com", "role": "member", "org": org.pk})
    assert Membership.objects.filter(org=org, user__email="nina@example.com").exists()


def test_a_member_who_has_not_set_a_password_is_sent_a_new_link_and_keeps_their_role(
    org, admin_actor, django_capture_on_commit_callbacks
):
    invite(admin_actor, role=Membership.ADMIN, capture=django_capture_on_commit_callbacks)
    again = invite(admin_actor, role=Membership.MEMBER, capture=django_capture_on_commit_callbacks)

    assert again.again
    assert again.sent
    assert len(mail.outbox) == 2
    assert Membership.objects.filter(org=org, user__email="nina@example.com").get().role == Membership.ADMIN
    audits = AuditRecord.objects.filter(org=org, action="member.invited").order_by("pk")
    assert [a.details["again"] for a in audits] == [False, True]
    assert Client().get(sent_link()).status_code == 200


def test_when_the_email_cannot_be_sent_the_invitation_carries_the_one_time_link(
    org, admin_actor, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing answers mail there

    invitation = invite(admin_actor, capture=django_capture_on_commit_callbacks)

    assert not invitation.sent
    assert invitation.link is not None
    path = invitation.link.removeprefix(settings.BRAIN_BASE_URL)
    page = Client().post(path, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert page.status_code == 302
    assert Client().get(path).status_code == 400  # once only


def test_an_existing_account_gets_no_link_even_when_the_email_fails(
    org, other_org, admin_actor, settings, django_capture_on_commit_callbacks
):
    make_user(other_org, email="kim@example.com", password=PASSWORD)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9

    invitation = invite(admin_actor, "kim@example.com", capture=django_capture_on_commit_callbacks)

    assert not invitation.sent
    assert invitation.link is None


@pytest.mark.django_db(transaction=True)  # the email goes when the invitation commits, within the request
def test_the_members_list_sends_the_invitation_again_and_shows_the_link_when_the_email_fails(org, settings):
    admin = make_org_admin(org)
    client = logged_in(admin)
    client.post("/admin/brain/membership/invite/", {"email": "nina@example.com", "role": "member", "org": org.pk})
    waiting = Membership.objects.get(org=org, user__email="nina@example.com")
    joined = Membership.objects.get(org=org, user=admin)
    listed = client.get("/admin/brain/membership/").content.decode()
    assert "Password set" in listed
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9

    answer = client.post(
        "/admin/brain/membership/", {"action": "invite_again", "_selected_action": [waiting.pk, joined.pk]}
    )

    assert answer.status_code == 302
    assert answer["Location"] == "/admin/brain/membership/invite/"
    page = client.get(answer["Location"]).content.decode()
    assert "The link for nina@example.com" in page
    assert re.search(r'<code id="invite-link-value-1">http\S+/invitation/\S+/</code>', page)
    assert "has set a password already; nothing sent" in page
    assert "The link for nina@example.com" not in client.get(answer["Location"]).content.decode()  # once
    assert AuditRecord.objects.filter(org=org, action="member.invited").count() == 2
